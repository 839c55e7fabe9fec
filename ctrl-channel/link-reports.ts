import { edgeRouters } from '#shared/entities/edge-router.ts';
import { transitRouters } from '#shared/entities/router.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { fitsKey } from '#shared/store/keys.ts';
import {
  INITIAL_LINK_LATENCY_NS,
  type LinkConnection,
  type LinkRecord,
  type LinkReporter,
  readLink,
  readLinks,
  recordLinkConnections,
  recordLinkLatency,
  removeLink,
  reportLink,
} from '#shared/store/link-items.ts';
import type { Channel } from './channel.ts';
import type { CtrlChangePoll } from './ctrl-change-poll.ts';
import type { LinkGraph } from './link-graph.ts';
import { ContentType } from './message.ts';
import { encodeBody } from './protobuf-codec.ts';
import type { RouterPresence } from './router-presence.ts';

/** A link's underlay connections as a router reports them (`ctrl.LinkConnState`). */
interface LinkConnState {
  readonly stateIteration: number;
  readonly conns: readonly { readonly type: string; readonly localAddr: string; readonly remoteAddr: string }[];
}

/** `ctrl.RouterLinks`, decoded. */
export interface RouterLinks {
  readonly links: readonly {
    readonly id: string;
    readonly destRouterId: string;
    readonly linkProtocol: string;
    readonly dialAddress: string;
    readonly iteration: number;
    readonly connState: LinkConnState | null;
  }[];
  readonly fullRefresh: boolean;
}

/** `ctrl.LinkStateUpdate`, decoded. */
export interface LinkStateUpdate {
  readonly linkId: string;
  readonly linkIteration: number;
  readonly connState: LinkConnState | null;
}

/** `metrics.MetricsMessage`, decoded: the histograms' means by metric name. */
export interface MetricsReport {
  readonly histograms: Readonly<Record<string, { readonly mean: number }>>;
}

/** The router a report comes from, as a connected router is (`control-plane.ts`): who, on which connection. */
export interface ReportingRouter {
  readonly router: { readonly id: string };
  readonly connectionId: string;
  readonly channel: Channel;
}

/** A `ctrl.Fault` about a link. */
export interface LinkFault {
  readonly subject: 'LinkFault' | 'LinkDuplicate';
  readonly id: string;
  readonly iteration: number;
}

/**
 * What routers report of their links, applied to the table (`link-items.ts`) and this endpoint's graph
 * (`link-graph.ts`), each router's reports one at a time in the order it sent them (a full refresh and the link it
 * reports right after must not cross). Link faults reach it from the fault handler (`circuit-ends.ts`).
 */
export interface LinkReports {
  /** RouterLinks (1035): the links a router dialed; a full refresh removes its links it leaves out. */
  routerLinks(router: ReportingRouter, report: RouterLinks): Promise<void>;
  /** LinkState (1053): a dialed link's underlay connections. */
  linkState(router: ReportingRouter, update: LinkStateUpdate): Promise<void>;
  /** Metrics (1007): the latency each link's end measured. */
  metrics(router: ReportingRouter, report: MetricsReport): Promise<void>;
  /** A LinkFault or LinkDuplicate from one of the link's routers: the link is removed, its other router told. */
  fault(router: ReportingRouter, fault: LinkFault): Promise<void>;
}

export interface LinkReportsContext {
  readonly deps: Deps;
  readonly endpointId: string;
  readonly changes: CtrlChangePoll;
  readonly presence: RouterPresence;
  readonly graph: LinkGraph;
  connected(routerId: string): ReportingRouter | undefined;
}

/** The most links one RouterLinks is read for: a router dials one link per peer listener and dialer. */
const MAX_REPORTED_LINKS = 1_000;
/** An address or a protocol of a link is a short string; longer ones are cut to this. */
const MAX_TEXT = 512;
/** The most underlay connections kept of a link (the reference router opens a few). */
const MAX_CONNECTIONS = 16;
/**
 * How seldom a link end's latency is written when it changes: at most once this often (and once measured at all),
 * unless its whole milliseconds are unchanged, when it is not written. Routers report every minute by default.
 */
export const LATENCY_WRITE_INTERVAL_MS = 30_000;

const cut = (text: string) => text.slice(0, MAX_TEXT);

function connectionsOf(state: LinkConnState | null): { connections: LinkConnection[]; connectionsIteration: number } {
  return {
    connections: (state?.conns ?? [])
      .slice(0, MAX_CONNECTIONS)
      .map((conn) => ({ type: cut(conn.type), source: cut(conn.localAddr), dest: cut(conn.remoteAddr) })),
    connectionsIteration: state?.stateIteration ?? 0,
  };
}

export function createLinkReports(context: LinkReportsContext): LinkReports {
  const { deps, endpointId, presence, graph } = context;
  /** Each router's reports, chained: one at a time, in order. */
  const queues = new WeakMap<ReportingRouter, Promise<void>>();
  /** The latency last written of each link's end by this endpoint (whole milliseconds) and when, by `<id> <end>`. */
  const latencyWritten = new Map<string, { ms: number; at: number }>();

  function serially(router: ReportingRouter, task: () => Promise<void>): Promise<void> {
    const done = (queues.get(router) ?? Promise.resolve()).then(task);
    queues.set(
      router,
      done.catch(() => undefined),
    );
    return done;
  }

  const reporterOf = (router: ReportingRouter): LinkReporter => ({
    routerId: router.router.id,
    connectionId: router.connectionId,
    endpointId,
  });

  /** Whether a link's destination is a router: one its source was told of, or one stored. */
  async function isRouter(routerId: string): Promise<boolean> {
    if (presence.get(routerId)) return true;
    if (!fitsKey(routerId)) return false;
    return (
      (await deps.store.get(edgeRouters, routerId)) !== undefined ||
      (await deps.store.get(transitRouters, routerId)) !== undefined
    );
  }

  /** Removes a link as known, unless it changed since; forgets it here when it is gone either way. */
  async function remove(link: LinkRecord, why: string, log: ReportingRouter['channel']['log'] | undefined) {
    const removed = await removeLink(deps.store, link, endpointId, deps.now());
    if (removed) {
      graph.removed(link.id);
      const detail = { linkId: link.id, sourceRouterId: link.sourceRouterId, destRouterId: link.destRouterId, why };
      if (log) log.info('ctrl channel link removed', detail);
      else deps.logger.info('ctrl channel link removed', detail);
    }
    return removed;
  }

  async function routerLinks(router: ReportingRouter, report: RouterLinks): Promise<void> {
    const { log } = router.channel;
    const reported = report.links.slice(0, MAX_REPORTED_LINKS).filter((link) => fitsKey(link.id));
    if (report.fullRefresh) {
      // Its links it no longer holds: in the table (the index, a moment behind) or known here.
      const held = new Set(reported.map((link) => link.id));
      const stored = await readLinks(deps.store);
      const known = new Map([...stored, ...graph.linksOf(router.router.id)].map((link) => [link.id, link]));
      for (const link of known.values()) {
        if (link.sourceRouterId !== router.router.id || held.has(link.id)) continue;
        await remove(link, 'not in its router’s full refresh', log);
      }
    }
    for (const link of reported) {
      if (link.destRouterId === router.router.id || !(await isRouter(link.destRouterId))) {
        log.warn('ctrl channel refused a link report', { linkId: link.id.slice(0, 64), reason: 'no such peer' });
        continue;
      }
      const outcome = await reportLink(
        deps.store,
        {
          id: link.id,
          iteration: link.iteration,
          destRouterId: link.destRouterId,
          protocol: cut(link.linkProtocol),
          dialAddress: cut(link.dialAddress),
          ...connectionsOf(link.connState),
        },
        reporterOf(router),
        deps.now(),
      );
      if (outcome.outcome === 'refused') {
        log.warn('ctrl channel refused a link report', {
          linkId: link.id.slice(0, 64),
          reason: 'another router dialed it',
        });
        continue;
      }
      graph.written(outcome.link);
      log.info('ctrl channel link reported', {
        linkId: link.id,
        destRouterId: link.destRouterId,
        iteration: link.iteration,
        outcome: outcome.outcome,
      });
    }
  }

  async function linkState(router: ReportingRouter, update: LinkStateUpdate): Promise<void> {
    if (!fitsKey(update.linkId)) return;
    const link = graph.link(update.linkId) ?? (await readLink(deps.store, update.linkId));
    const { connections, connectionsIteration } = connectionsOf(update.connState);
    // Only the source reports it, of the link's current iteration, and only a newer set counts (the router resends
    // the same set every minute).
    if (!link || link.sourceRouterId !== router.router.id || link.iteration !== update.linkIteration) return;
    if (link.connectionsIteration >= connectionsIteration) return;
    const now = deps.now();
    const written = await recordLinkConnections(
      deps.store,
      { linkId: link.id, iteration: link.iteration, connections, connectionsIteration },
      reporterOf(router),
      now,
    );
    // The graph learns the new set from the write's notice (the table's revision of the link is unknown here).
    if (written)
      router.channel.log.debug('ctrl channel link connections recorded', { linkId: link.id, connectionsIteration });
  }

  async function metrics(router: ReportingRouter, report: MetricsReport): Promise<void> {
    const routerId = router.router.id;
    for (const link of graph.linksOf(routerId)) {
      const latency = report.histograms[`link.${link.id}.latency`]?.mean;
      if (latency === undefined || !Number.isFinite(latency) || latency < 0) continue;
      const queueTime = report.histograms[`link.${link.id}.queue_time`]?.mean ?? 0;
      const measured = Math.trunc(latency + (Number.isFinite(queueTime) && queueTime > 0 ? queueTime : 0));
      const end = link.sourceRouterId === routerId ? 'source' : 'dest';
      const before = end === 'source' ? link.sourceLatency : link.destLatency;
      // Known here at once (this endpoint's routing sees it); written when its milliseconds changed, at most every
      // LATENCY_WRITE_INTERVAL_MS, and at once when it replaces the initial guess.
      graph.measured(link, end, measured);
      const key = `${link.id} ${end}`;
      const last = latencyWritten.get(key);
      const ms = Math.trunc(measured / 1e6);
      const now = deps.now();
      const due =
        before === INITIAL_LINK_LATENCY_NS ||
        last === undefined ||
        (last.ms !== ms && now.getTime() - last.at >= LATENCY_WRITE_INTERVAL_MS);
      if (!due) continue;
      if (await recordLinkLatency(deps.store, link, end, measured, endpointId, now)) {
        latencyWritten.set(key, { ms, at: now.getTime() });
      }
    }
  }

  async function fault(router: ReportingRouter, reported: LinkFault): Promise<void> {
    const { log } = router.channel;
    const reporterId = router.router.id;
    if (!fitsKey(reported.id)) return;
    const link = await readLink(deps.store, reported.id);
    if (!link) {
      graph.removed(reported.id);
      log.debug('ctrl channel link fault for an unknown link', { linkId: reported.id });
      return;
    }
    // Only one of the link's two routers speaks for it (the reference does not check).
    if (link.sourceRouterId !== reporterId && link.destRouterId !== reporterId) {
      log.warn('ctrl channel ignored a link fault', { linkId: link.id, reason: 'the router is not on the link' });
      return;
    }
    if (reported.iteration !== 0 && link.iteration !== 0 && reported.iteration < link.iteration) {
      log.info('ctrl channel ignored a link fault', { linkId: link.id, reason: 'an older iteration' });
      return;
    }
    const wasUsable = graph.isUsable(link);
    const other = link.sourceRouterId === reporterId ? link.destRouterId : link.sourceRouterId;
    const forwardTo = wasUsable ? other : undefined;
    const removed = await removeLink(deps.store, link, endpointId, deps.now(), {
      iteration: reported.iteration,
      ...(forwardTo ? { forwardTo } : {}),
    });
    if (!removed) return;
    graph.removed(link.id);
    log.info('ctrl channel link faulted', { linkId: link.id, subject: reported.subject, iteration: link.iteration });
    if (forwardTo) tellLinkFault(forwardTo, link.id, reported.iteration);
  }

  /** Tells a link's other router, if it is connected here, that the link failed: it closes its end. */
  function tellLinkFault(routerId: string, linkId: string, iteration: number): void {
    context.connected(routerId)?.channel.send({
      contentType: ContentType.fault,
      body: encodeBody('ctrl.Fault', { subject: 'LinkFault', id: linkId, iteration }),
    });
  }

  /**
   * Whether a link died with its source's connection: the connection that last reported it is offline (ended, or its
   * lease seen run out); or its source connected again a while ago (past a full refresh's time, which re-reports or
   * prunes every link) and has not reported it since. Never one whose connection is here, and never on a presence
   * that does not know the connection yet (a report can be read before the connection that made it).
   */
  function isDead(link: LinkRecord, now: number): boolean {
    const source = presence.get(link.sourceRouterId);
    if (!source || context.connected(link.sourceRouterId)?.connectionId === link.reportedByConnection) return false;
    if (source.connectionId === link.reportedByConnection) return !source.online;
    const connectedAt = Date.parse(source.connectedAt);
    return Date.parse(link.updatedAt) < connectedAt && now - connectedAt > REREPORT_MS;
  }

  /**
   * The links of routers that are gone, removed: a router's links die with its connection, as the reference removes
   * a disconnected router's links (the destination's end is faulted by its router). Each is removed only if still as
   * read (a router that connected again and reported it since keeps it).
   */
  async function removeDeadLinks(links: readonly LinkRecord[]): Promise<void> {
    const now = deps.now().getTime();
    for (const link of links) {
      if (!isDead(link, now)) continue;
      try {
        if (!(await remove(link, 'its router is offline', undefined))) graph.removed(link.id);
      } catch (error) {
        deps.logger.warn('ctrl channel dead link not removed', { linkId: link.id, detail: (error as Error).message });
      }
    }
  }

  // A router that went offline: its links at once; every link once a minute after the graph is read again (what
  // an endpoint that died left).
  presence.onChange((changed) => {
    if (changed.online) return;
    void removeDeadLinks(graph.links().filter((link) => link.sourceRouterId === changed.routerId));
  });
  let lastScan = 0;
  context.changes.afterEachPoll(async () => {
    const now = deps.now().getTime();
    if (now - lastScan < DEAD_LINK_SCAN_MS) return;
    lastScan = now;
    await removeDeadLinks(graph.links());
    for (const key of latencyWritten.keys()) if (!graph.link(key.split(' ')[0]!)) latencyWritten.delete(key);
  });
  // A fault another endpoint handled, for a router connected here: passed on.
  context.changes.listen(async (page) => {
    for (const change of page) {
      if (change.kind !== 'link' || !change.fault?.forwardTo || change.endpointId === endpointId) continue;
      tellLinkFault(change.fault.forwardTo, change.linkId, change.fault.iteration);
    }
  });

  return {
    routerLinks: (router, report) => serially(router, () => routerLinks(router, report)),
    linkState: (router, update) => serially(router, () => linkState(router, update)),
    metrics: (router, report) => serially(router, () => metrics(router, report)),
    fault: (router, reported) => serially(router, () => fault(router, reported)),
  };
}

/** How often every link is checked for a dead source (the reference's cycle). */
const DEAD_LINK_SCAN_MS = 60_000;
/** How long a reconnected router has to report its links again (its full refresh comes within a second). */
const REREPORT_MS = 60_000;
