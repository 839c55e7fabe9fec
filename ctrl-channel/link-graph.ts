import type { Deps } from '#shared/ports/deps.ts';
import { type LinkRecord, linkCostOf, readLinks, readLinksById } from '#shared/store/link-items.ts';
import type { CtrlChangePoll } from './ctrl-change-poll.ts';
import type { RouterPresence } from './router-presence.ts';

/**
 * The links between routers as one endpoint process knows them, in memory (routing reads it for every circuit, as
 * the reference's link table is read: no table call on that path), kept from the table (`shared/store/link-items.ts`,
 * the truth every endpoint and function reads): what this endpoint writes at once; what any endpoint writes from the
 * change log's `link` notices (each names a link, read again strongly, so notices read out of order still settle on
 * the stored link); and every link read again from their index each `reconcileMs` (a minute), which mends whatever a
 * lost notice left. Two endpoints therefore hold the same graph a few seconds after any change.
 */
export interface LinkGraph {
  /** A link by id. */
  link(linkId: string): LinkRecord | undefined;
  /** Every link. */
  links(): LinkRecord[];
  /** The links a router dialed or was dialed by. */
  linksOf(routerId: string): LinkRecord[];
  /** Whether a link can carry circuits now: Connected, not down, both its routers online (whichever endpoint). */
  isUsable(link: LinkRecord): boolean;
  /** The usable links between two routers (either direction), cheapest first ({@link linkCostOf}). */
  usableLinksBetween(routerId: string, otherId: string): LinkRecord[];
  /** The routers a usable link joins to this one, each with its cheapest such link (a path search's neighbours). */
  neighbours(routerId: string): { readonly routerId: string; readonly link: LinkRecord }[];
  /** Resolves once every link has been read within `reconcileMs` (at once when it has). */
  current(): Promise<void>;
  /** A link this endpoint wrote (as written): known at once. */
  written(link: LinkRecord): void;
  /**
   * What a router connected here measured of a link's latency at its end (nanoseconds): known here at once, over what
   * the table says (whose writes are throttled), for as long as the router is connected here and the link not replaced.
   */
  measured(link: LinkRecord, end: 'source' | 'dest', latency: number): void;
  /** A link this endpoint removed (or found gone): forgotten at once. */
  removed(linkId: string): void;
  /**
   * Hears of each link this endpoint forgets, however it learned it is gone (its own removal, another endpoint's
   * notice, a full read): the circuits crossing it have lost their way.
   */
  onRemoved(listener: (link: LinkRecord) => void): void;
}

/** How often every link is read again. */
export const LINK_GRAPH_RECONCILE_MS = 60_000;
/**
 * How long a link written or removed here is trusted over the index, which may not show the write yet: a read of
 * every link keeps a link it lacks that changed this lately, and ignores a removed one it still has.
 */
const INDEX_LAG_MS = 10_000;
/** How long a removed link is remembered, so an index read a moment behind does not bring it back. */
const REMOVED_KEPT_MS = 10 * 60_000;

export interface LinkGraphOptions {
  readonly reconcileMs: number;
}

export function createLinkGraph(
  deps: Deps,
  changes: CtrlChangePoll,
  presence: RouterPresence,
  isConnectedHere: (routerId: string) => boolean,
  options: LinkGraphOptions = { reconcileMs: LINK_GRAPH_RECONCILE_MS },
): LinkGraph {
  const links = new Map<string, LinkRecord>();
  /** The latest latency each end's router measured, by `<link id> <end>`, of the link's incarnation then. */
  const measurements = new Map<string, { createdAt: string; iteration: number; latency: number }>();
  /**
   * Links removed, by id, with when this endpoint saw it: a record made before then (the same link, read late) is
   * not taken again; a link dialed again under the same id after its removal is.
   */
  const removedAt = new Map<string, number>();
  const removedListeners: ((link: LinkRecord) => void)[] = [];
  let readAt: number | undefined;
  let reading: Promise<void> | undefined;
  const now = () => deps.now().getTime();

  /** Takes a link unless what is known is newer: a later incarnation (replaced since), or a later revision of it. */
  function take(link: LinkRecord): void {
    const known = links.get(link.id);
    const older =
      known !== undefined &&
      (link.createdAt < known.createdAt || (link.createdAt === known.createdAt && link.revision < known.revision));
    if (older) return;
    const removed = removedAt.get(link.id);
    if (removed !== undefined && Date.parse(link.createdAt) <= removed) return;
    removedAt.delete(link.id);
    links.set(link.id, link);
  }

  function forget(linkId: string): void {
    const known = links.get(linkId);
    links.delete(linkId);
    measurements.delete(`${linkId} source`);
    measurements.delete(`${linkId} dest`);
    removedAt.set(linkId, now());
    if (known) for (const listener of removedListeners) listener(known);
  }

  /** A link with the latencies its routers connected here measured of it since its last write. */
  function withMeasurements(link: LinkRecord): LinkRecord {
    let measured = link;
    for (const end of ['source', 'dest'] as const) {
      const routerId = end === 'source' ? link.sourceRouterId : link.destRouterId;
      const latest = measurements.get(`${link.id} ${end}`);
      const current = latest?.createdAt === link.createdAt && latest.iteration === link.iteration;
      if (!current || !isConnectedHere(routerId)) continue;
      measured = { ...measured, [end === 'source' ? 'sourceLatency' : 'destLatency']: latest.latency };
    }
    return measured;
  }
  const all = () => [...links.values()].map(withMeasurements);

  async function readAll(): Promise<void> {
    const startedAt = now();
    const stored = await readLinks(deps.store);
    const ids = new Set(stored.map((link) => link.id));
    for (const link of stored) take(link);
    for (const known of [...links.values()]) {
      const settled = Date.parse(known.updatedAt) < startedAt - INDEX_LAG_MS;
      if (!ids.has(known.id) && settled) forget(known.id);
    }
    for (const [id, at] of removedAt) if (at < startedAt - REMOVED_KEPT_MS) removedAt.delete(id);
    readAt = startedAt;
  }

  function read(): Promise<void> {
    reading ??= readAll().finally(() => {
      reading = undefined;
    });
    return reading;
  }

  const isFresh = () => readAt !== undefined && now() - readAt < options.reconcileMs;

  changes.listen(async (page) => {
    const named = page.flatMap((change) => (change.kind === 'link' ? [change.linkId] : []));
    if (named.length === 0) return;
    const stored = await readLinksById(deps.store, named);
    for (const id of new Set(named)) {
      const link = stored.get(id);
      if (link) take(link);
      else if (links.has(id)) forget(id);
    }
  });
  changes.afterEachPoll(async () => {
    if (!isFresh()) await read();
  });

  const isUsable = (link: LinkRecord) =>
    link.state === 'Connected' &&
    !link.down &&
    presence.isOnline(link.sourceRouterId) &&
    presence.isOnline(link.destRouterId);
  const linksOf = (routerId: string) =>
    all().filter((link) => link.sourceRouterId === routerId || link.destRouterId === routerId);
  const byCost = (a: LinkRecord, b: LinkRecord) => linkCostOf(a) - linkCostOf(b) || a.id.localeCompare(b.id);

  return {
    link(linkId) {
      const link = links.get(linkId);
      return link && withMeasurements(link);
    },
    links: all,
    linksOf,
    isUsable,
    usableLinksBetween: (routerId, otherId) =>
      linksOf(routerId)
        .filter((link) => (link.sourceRouterId === routerId ? link.destRouterId : link.sourceRouterId) === otherId)
        .filter(isUsable)
        .sort(byCost),
    neighbours(routerId) {
      const cheapest = new Map<string, LinkRecord>();
      for (const link of linksOf(routerId).filter(isUsable)) {
        const other = link.sourceRouterId === routerId ? link.destRouterId : link.sourceRouterId;
        const known = cheapest.get(other);
        if (!known || byCost(link, known) < 0) cheapest.set(other, link);
      }
      return [...cheapest].map(([other, link]) => ({ routerId: other, link }));
    },
    current: () => (isFresh() ? Promise.resolve() : read()),
    written: take,
    measured(link, end, latency) {
      measurements.set(`${link.id} ${end}`, { createdAt: link.createdAt, iteration: link.iteration, latency });
    },
    removed: forget,
    onRemoved(listener) {
      removedListeners.push(listener);
    },
  };
}
