import type { ControlFeatureFactory } from './control-plane.ts';
import { bindTunnelCircuits } from './tunnel-circuits.ts';
import { bindTunnelTerminators } from './tunnel-terminators.ts';

/**
 * The router-embedded tunneler's requests (issue 37): a router with `isTunnelerEnabled` hosts the services its own
 * identity may Bind (`tunnel-terminators.ts`) and intercepts those it may Dial (`tunnel-circuits.ts`), as its data
 * model tells it (`policy-data-state.ts`). A router that does not tunnel is refused each of them (its identity is
 * not there: "tunneling not enabled").
 */
export const routerTunnel: ControlFeatureFactory = (context) => ({
  bind(connected) {
    bindTunnelTerminators(context, connected);
    bindTunnelCircuits(context, connected);
  },
});
