import { randomUUID } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { CONTROLLER_ID } from '#shared/ids.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { endRouterConnection, putRouterConnection, renewRouterLease } from '#shared/store/router-connections.ts';
import { Channel, type ChannelTimings, DEFAULT_CHANNEL_TIMINGS, endSocket } from './channel.ts';
import { createCircuitWrites } from './circuit-writes.ts';
import { CONTROL_FEATURES } from './control-features.ts';
import { type ConnectedRouter, type ControlFeatureFactory, createControlPlane } from './control-plane.ts';
import { createCtrlChangePoll } from './ctrl-change-poll.ts';
import { createDialCache } from './dial-cache.ts';
import { createEndpointRelay } from './endpoint-relay.ts';
import { recordFrames } from './frame-recorder.ts';
import { helloAccepted, helloIdOf, helloRefused, readHello } from './hello.ts';
import { createLinkGraph, LINK_GRAPH_RECONCILE_MS, type LinkGraph } from './link-graph.ts';
import { linkListenersOf } from './link-listeners.ts';
import { createLinkReports } from './link-reports.ts';
import { Header } from './message.ts';
import { type ConnectingRouter, RouterRefused, routerOfCertificate } from './router-certificate.ts';
import { createRouterCostCache } from './router-cost-cache.ts';
import { createRouterDirectory } from './router-directory.ts';
import { createRouterPresence, PRESENCE_REFRESH_MS } from './router-presence.ts';
import { createTerminatorCache } from './terminator-cache.ts';
import { createTerminatorChoice } from './terminator-choice.ts';
import type { RandomSource } from './terminator-strategies.ts';
import { CTRL_PROTOCOL_VERSION, decodeVersionInfo, type VersionInfo } from './version-info.ts';

/** The ALPN protocol a router's control channel asks for (the reference's `ziti-ctrl` transport). */
export const CTRL_ALPN = 'ziti-ctrl';

/**
 * The capabilities this controller tells routers of: bits 1-4 (create terminator v2, single-source links, create
 * circuit v2, router data model), which v2 routers assume, and bit 6 (legacy sessions as JWTs), without which a v2
 * router refuses the controller. Not bit 5 (grouped control channels): a router then dials one underlay, not a
 * second high-priority one.
 */
export const CONTROLLER_CAPABILITIES = Buffer.from([0b0101_1110]);

/** Go's names of the architectures Node names otherwise: the reference reports `runtime.GOARCH`. */
const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386' };

/** The reference's connect timeout: a connection has this long to send its hello. */
const HELLO_TIMEOUT_MS = 5_000;

export type { ConnectedRouter } from './control-plane.ts';

export interface CtrlEndpointOptions {
  readonly deps: Deps;
  /** This endpoint process's id in the routers' connection items (a random one by default). */
  readonly endpointId?: string;
  readonly timings?: ChannelTimings;
  readonly helloTimeoutMs?: number;
  /** The control plane's features each router is bound to once its hello is accepted (all of them by default). */
  readonly features?: readonly ControlFeatureFactory[];
  /** How often every router's connection is read again (`router-presence.ts`; 10 s by default). */
  readonly presenceRefreshMs?: number;
  /** How often every link is read again (`link-graph.ts`; a minute by default). */
  readonly linkGraphReconcileMs?: number;
  /** The terminator strategies' random draws (`Math.random` by default; a seeded source in tests). */
  readonly random?: RandomSource;
  /**
   * Where the other endpoint processes reach this one to relay messages to its routers (`endpoint-relay.ts`): the
   * controller's server key and certificate, the address they dial and the port to listen on (0: any). Without it, a
   * path through a router held by another endpoint is refused.
   */
  readonly relay?: {
    readonly tls: { readonly key: string; readonly cert: string };
    readonly host: string;
    readonly port: number;
  };
}

/** The control channel's endpoint: takes TLS connections that negotiated `ziti-ctrl` and speaks the channel on them. */
export interface CtrlEndpoint {
  accept(socket: TLSSocket): void;
  /** The router's channel on this endpoint, if it is connected here. */
  connected(routerId: string): ConnectedRouter | undefined;
  /** The links between routers as this endpoint knows them (what routing reads). */
  readonly linkGraph: LinkGraph;
  /**
   * Resolves once the endpoint may take routers: its relay listens and is registered (at once without a relay),
   * with the relay's port. Routers' connections wait for it.
   */
  readonly ready: Promise<{ readonly relayPort?: number }>;
  /** Resolves once every circuit answered so far is stored (they are answered first: `circuit-writes.ts`). */
  circuitsStored(): Promise<void>;
  /** Takes the renewed server certificate (the relay presents it). */
  setSecureContext(tls: { readonly key: string; readonly cert: string }): void;
  /** Resolves once what was written to the change log before the call has been read (`CtrlChangePoll.passed`). */
  changesRead(): Promise<void>;
  /** Closes every channel. */
  close(): void;
}

export function createCtrlEndpoint(options: CtrlEndpointOptions): CtrlEndpoint {
  const endpointId = options.endpointId ?? randomUUID();
  // Every line of the endpoint names it (a router's also the router and its connection), and none carries the context
  // of a function's invocation: locally the endpoint shares its process and its deps with the HTTP server.
  const deps: Deps = { ...options.deps, logger: options.deps.logger.detached({ endpointId }) };
  const timings = options.timings ?? DEFAULT_CHANNEL_TIMINGS;
  const routers = new Map<string, ConnectedRouter>();
  const pending = new Set<TLSSocket>();
  const log = (event: string, detail: Record<string, unknown>) => deps.logger.info(event, detail);
  const changes = createCtrlChangePoll(deps, () => routers.size > 0);
  const presence = createRouterPresence(deps, changes, { refreshMs: options.presenceRefreshMs ?? PRESENCE_REFRESH_MS });
  const linkGraph = createLinkGraph(deps, changes, presence, (routerId) => routers.has(routerId), {
    reconcileMs: options.linkGraphReconcileMs ?? LINK_GRAPH_RECONCILE_MS,
  });
  const connected = (routerId: string) => routers.get(routerId);
  const relay = options.relay && createEndpointRelay({ deps, endpointId, connected, timings, ...options.relay });
  const ready = relay ? relay.start().then((relayPort) => ({ relayPort })) : Promise.resolve({});
  // A failed start is the routers' to see (their connections wait for it, and close); the process logs it once.
  ready.catch((error: Error) => deps.logger.warn('ctrl relay did not start', { detail: error.message }));
  const circuitWrites = createCircuitWrites();
  const directory = createRouterDirectory({ endpointId, connected, presence, relay, logger: deps.logger });
  const linkReports = createLinkReports({ deps, endpointId, changes, presence, graph: linkGraph, connected });
  const controlPlane = createControlPlane(
    {
      deps,
      endpointId,
      timings,
      routers: () => routers.values(),
      connected,
      changes,
      presence,
      linkGraph,
      linkReports,
      terminatorChoice: createTerminatorChoice(deps, options.random ?? Math.random),
      dialCache: createDialCache(changes, () => deps.now().getTime()),
      circuitWrites,
      directory,
      terminatorCache: createTerminatorCache(changes, () => deps.now().getTime()),
      routerCosts: createRouterCostCache(changes, () => deps.now().getTime()),
    },
    options.features ?? CONTROL_FEATURES,
  );
  // A lease is renewed on every other answered heartbeat, not on each (half the writes of a connected router): it
  // covers the answer that renewed it, the next one (not renewed) and the timeout after that, so it never runs out
  // while the channel is open, and runs out on its own within that when this endpoint dies.
  const leaseMs = timings.unresponsiveTimeoutMs + 2 * timings.heartbeatIntervalMs;
  // Due 1.75 intervals after the last renewal: past the next answer however late the ticker sends its heartbeat
  // (up to half an interval), before the one after it.
  const leaseDue = (now: number, leaseExpiresAt: number) =>
    now + timings.unresponsiveTimeoutMs + timings.heartbeatIntervalMs / 4 >= leaseExpiresAt;

  /**
   * Records the router online in the table and keeps it so while the channel lives; offline when it closes. False, the
   * channel closed, when the router was deleted, disabled or re-enrolled since its certificate was checked.
   */
  async function recordOnline(connected: ConnectedRouter): Promise<boolean> {
    const { router, channel, versionInfo, connectionId } = connected;
    const collection = router.kind === 'edge-router' ? 'edge-routers' : 'routers';
    let leaseExpiresAt = deps.now().getTime() + leaseMs;
    const stored = await putRouterConnection(
      deps.store,
      collection,
      {
        routerId: router.id,
        endpointId,
        connectionId,
        connectedAt: connected.connectedAt.toISOString(),
        leaseExpiresAt,
        ...versionInfo,
        linkListeners: connected.linkListeners.map((listener) => listener.toString('base64')),
      },
      router.fingerprint,
    );
    if (!stored) {
      channel.close('the router was deleted, disabled or re-enrolled while it connected');
      return false;
    }
    presence.connectedHere({
      routerId: router.id,
      collection,
      connectionId,
      endpointId,
      connectedAt: connected.connectedAt.toISOString(),
      version: versionInfo.version,
      linkListeners: connected.linkListeners,
    });
    channel.onAlive(() => {
      const now = deps.now().getTime();
      if (!leaseDue(now, leaseExpiresAt)) return;
      leaseExpiresAt = now + leaseMs;
      renewRouterLease(deps.store, collection, router.id, connectionId, leaseExpiresAt)
        .then((current) => {
          if (!current)
            channel.close('the connection is no longer current: the router connected again, or was deleted');
        })
        .catch((error: Error) => {
          // Not moved on: the next answer tries again.
          leaseExpiresAt = 0;
          channel.log.failed('ctrl channel lease renewal failed', { detail: error.message });
        });
    });
    channel.onClose(() => {
      presence.disconnectedHere(router.id, connectionId);
      endRouterConnection(deps.store, collection, router.id, connectionId, deps.now().toISOString()).catch(
        (error: Error) => channel.log.failed('ctrl channel end not recorded', { detail: error.message }),
      );
    });
    return true;
  }

  /** Records the connection's frames (`CTRL_CHANNEL_RECORD`); a recording that fails never fails the connection. */
  function record(socket: TLSSocket, directory: string): void {
    const failed = (error: Error) => deps.logger.warn('ctrl channel recording failed', { detail: error.message });
    try {
      recordFrames(socket, directory, failed);
    } catch (error) {
      failed(error as Error);
    }
  }

  async function open(socket: TLSSocket): Promise<void> {
    // No router is recorded as held here before the other endpoints can find this one.
    await ready;
    const { hello, decoder, following } = await readHello(socket, options.helloTimeoutMs ?? HELLO_TIMEOUT_MS);
    const claimedId = helloIdOf(hello);
    let router: ConnectingRouter;
    let versionInfo: VersionInfo | undefined;
    try {
      router = await routerOfCertificate(deps, socket.getPeerX509Certificate(), claimedId);
      versionInfo = decodeVersionInfo(hello.headers.get(Header.helloVersion));
      if (!versionInfo) throw new RouterRefused('the hello has no version header of five fields');
    } catch (error) {
      if (!(error instanceof RouterRefused)) throw error;
      log('ctrl channel refused a router', { claimedId: claimedId.slice(0, 64), reason: error.reason });
      endSocket(socket, helloRefused(hello, error.reason));
      return;
    }
    const linkListeners = linkListenersOf(hello);
    if (linkListeners.problem) {
      deps.logger.warn('ctrl channel left out link listeners', { routerId: router.id, reason: linkListeners.problem });
    }
    socket.write(
      helloAccepted(hello, {
        id: CONTROLLER_ID,
        versionInfo: {
          version: CTRL_PROTOCOL_VERSION,
          revision: deps.config.revision,
          buildDate: deps.config.buildDate,
          os: process.platform,
          arch: GO_ARCH[process.arch] ?? process.arch,
        },
        capabilities: CONTROLLER_CAPABILITIES,
      }),
    );
    const connectionId = randomUUID();
    // The connection's own lines (opened, closed: once each) are written whole; what its messages cause goes through
    // the channel's bounded log, with the same context.
    const routerLogger = deps.logger.child({ routerId: router.id, connectionId });
    const channel = new Channel(socket, decoder, timings, routerLogger);
    const connected: ConnectedRouter = {
      router,
      channel,
      versionInfo,
      connectionId,
      connectedAt: deps.now(),
      linkListeners: linkListeners.listeners,
    };
    // A router reconnecting before its old connection was seen to drop replaces it.
    routers.get(router.id)?.channel.close('the router connected again');
    routers.set(router.id, connected);
    changes.wake();
    channel.onClose((reason) => {
      if (routers.get(router.id) === connected) routers.delete(router.id);
      routerLogger.info('ctrl channel closed', { reason });
    });
    // Bound before anything is awaited: the router speaks as soon as it has the answer to its hello, and a message
    // arriving before its handler would be dropped.
    controlPlane.bind(connected);
    channel.deliver(following);
    if (!(await recordOnline(connected))) return;
    routerLogger.info('ctrl channel opened', { version: versionInfo.version });
    await controlPlane.start(connected);
  }

  return {
    accept(socket) {
      // Each message is small and waited for (a Route, its answer): sent at once, as Go's connections send (no Nagle).
      socket.setNoDelay(true);
      if (deps.config.ctrlChannelRecordDir) record(socket, deps.config.ctrlChannelRecordDir);
      pending.add(socket);
      socket.on('error', () => socket.destroy());
      open(socket)
        .catch((error: Error) => {
          log('ctrl channel connection dropped', { reason: error.message });
          endSocket(socket);
        })
        .finally(() => pending.delete(socket));
    },
    connected,
    linkGraph,
    ready,
    circuitsStored: () => circuitWrites.settled(),
    setSecureContext(tls) {
      relay?.setSecureContext(tls);
    },
    changesRead: () => changes.passed(),
    close() {
      relay?.close().catch(() => undefined);
      changes.close();
      controlPlane.close();
      for (const socket of pending) socket.destroy();
      for (const { channel } of routers.values()) channel.close('the controller is closing');
    },
  };
}
