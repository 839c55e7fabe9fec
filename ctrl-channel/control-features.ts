import { apiSessionSync } from './api-session-sync.ts';
import { circuits } from './circuits.ts';
import type { ControlFeatureFactory } from './control-plane.ts';
import { edgeHello } from './edge-hello.ts';
import { linkVerification } from './link-verify.ts';
import { links } from './links.ts';
import { peerStates } from './peer-state.ts';
import { routerDataModel } from './router-data-model.ts';
import { routerInterfaces } from './router-interfaces.ts';
import { routerRevocation } from './router-revocation.ts';
import { routerTerminators } from './terminators.ts';
import { routerTunnel } from './tunnel.ts';

/**
 * The control plane's features, in the order their `start` runs for a newly connected router: a feature that needs
 * what another learns (the router's edge listeners, from its ClientHello) comes after it.
 */
export const CONTROL_FEATURES: readonly ControlFeatureFactory[] = [
  routerRevocation,
  routerInterfaces,
  // The fabric's, which every router gets (edge and transit): verifying link dialers, telling routers of their peers,
  // the links they report.
  linkVerification,
  peerStates,
  links,
  edgeHello,
  apiSessionSync,
  routerDataModel,
  routerTerminators,
  circuits,
  routerTunnel,
];
