import type { Deps } from '#shared/ports/deps.ts';
import type { Channel, ChannelTimings } from './channel.ts';
import type { CircuitWrites } from './circuit-writes.ts';
import type { CtrlChangePoll } from './ctrl-change-poll.ts';
import type { DialCache } from './dial-cache.ts';
import type { LinkGraph } from './link-graph.ts';
import type { LinkReports } from './link-reports.ts';
import type { ConnectingRouter } from './router-certificate.ts';
import type { RouterCostCache } from './router-cost-cache.ts';
import type { RouterDirectory } from './router-directory.ts';
import type { RouterPresence } from './router-presence.ts';
import type { TerminatorCache } from './terminator-cache.ts';
import type { TerminatorChoice } from './terminator-choice.ts';
import type { VersionInfo } from './version-info.ts';

/** A router whose hello was accepted: its channel, and what it said of itself. */
export interface ConnectedRouter {
  readonly router: ConnectingRouter;
  readonly channel: Channel;
  readonly versionInfo: VersionInfo;
  /** This connection's id in the router's connection item: a write guarded by it never touches a newer connection. */
  readonly connectionId: string;
  readonly connectedAt: Date;
  /** Where its peers dial it for links: each `ctrl.Listener` of its hello as it encoded it (`link-listeners.ts`). */
  readonly linkListeners: readonly Buffer[];
}

/** What every feature of the control plane may use: the dependencies, and the routers connected to this endpoint. */
export interface ControlContext {
  readonly deps: Deps;
  /** This endpoint process's id (the routers' connection items name it). */
  readonly endpointId: string;
  /** The channels' timings, and the waits of the features' own requests (a circuit's route). */
  readonly timings: ChannelTimings;
  /** The routers connected to this endpoint now. */
  routers(): Iterable<ConnectedRouter>;
  /** The routers' change log as this endpoint reads it while it has routers: features listen to it. */
  readonly changes: CtrlChangePoll;
  connected(routerId: string): ConnectedRouter | undefined;
  /** Every router's presence, whichever endpoint holds it (`router-presence.ts`). */
  readonly presence: RouterPresence;
  /** The links between routers, as this endpoint keeps them in memory (`link-graph.ts`). */
  readonly linkGraph: LinkGraph;
  /** What routers report of their links, applied to the table and the graph (`link-reports.ts`). */
  readonly linkReports: LinkReports;
  /** How circuits' terminators are picked, and what the strategies learnt of them (`terminator-choice.ts`). */
  readonly terminatorChoice: TerminatorChoice;
  /** What dials read of the policies, kept in memory and dropped by the change log's notices (`dial-cache.ts`). */
  readonly dialCache: DialCache;
  /** Circuits answered and being stored: what reads stored circuits waits for them (`circuit-writes.ts`). */
  readonly circuitWrites: CircuitWrites;
  /** Messages to any router, connected here or to another endpoint (`router-directory.ts`). */
  readonly directory: RouterDirectory;
  /** Each service's terminators, kept in memory and dropped by the change log's notices (`terminator-cache.ts`). */
  readonly terminatorCache: TerminatorCache;
  /** Each router's cost and traversal flag, kept alike (`router-cost-cache.ts`). */
  readonly routerCosts: RouterCostCache;
}

/**
 * One capability of the control plane (the edge hello, API session sync, the router data model, terminators,
 * circuits, ...), in a module of its own. What it says about a router goes through the router's `channel.log`, bounded
 * per channel; a handler lets a malformed message's `MalformedMessage` reach the channel, which counts it (or hands
 * it to `channel.log.failure` when it answers the router first). Each router is bound in two steps, so no message is
 * lost between them:
 * every feature's `bind` registers its message handlers before any message after the hello is delivered, then
 * each feature's `start` runs, in the order of the list (`control-features.ts`), each awaited before the next (the API
 * sessions are synced after the router's ClientHello, as the reference does).
 */
export interface ControlFeature {
  /** Registers the feature's handlers on the router's channel: synchronous, before any message is delivered. */
  bind?(router: ConnectedRouter): void;
  /** What the feature sends once every handler is in place; a failure is logged, the channel stays open. */
  start?(router: ConnectedRouter): void | Promise<void>;
  /** Stops what the feature runs for the whole endpoint (timers, pollers): the endpoint is closing. */
  close?(): void;
}

export type ControlFeatureFactory = (context: ControlContext) => ControlFeature;

/** The control plane of one endpoint: binds each connected router to every feature. */
export interface ControlPlane {
  bind(router: ConnectedRouter): void;
  start(router: ConnectedRouter): Promise<void>;
  close(): void;
}

export function createControlPlane(context: ControlContext, factories: readonly ControlFeatureFactory[]): ControlPlane {
  const features = factories.map((factory) => factory(context));
  return {
    bind(router) {
      for (const feature of features) feature.bind?.(router);
    },
    async start(router) {
      for (const feature of features) {
        if (router.channel.closeReason !== undefined) return;
        try {
          await feature.start?.(router);
        } catch (error) {
          router.channel.log.failed('ctrl channel feature failed to start', { detail: (error as Error).message });
        }
      }
    },
    close() {
      for (const feature of features) feature.close?.();
    },
  };
}
