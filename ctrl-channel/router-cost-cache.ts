import type { CtrlChange } from '#shared/store/ctrl-changes.ts';
import type { CtrlChangePoll } from './ctrl-change-poll.ts';
import { createKeptReads, dropOnChanges } from './kept-reads.ts';
import type { RouterCost } from './router-paths.ts';

/**
 * What an endpoint keeps in memory of the routers a multi-router circuit's path is weighed by (mesh design G.1.4,
 * step 8): each router's cost and traversal flag, read from its stored document once rather than for every dial
 * whose terminator is on another router. An entry is dropped by the change log's notices (`ctrl-change-poll.ts`),
 * within the second or two the log takes:
 *
 * - `router-cost` names a router (edge or transit) whose cost or traversal flag changed, or which was deleted: the
 *   kit writes it with such a write of either type (`EntityDefinition.routerNotices`), and with no other;
 * - the other notices this version writes change no router's cost;
 * - any other kind, one this module does not know, drops every entry.
 *
 * A short maximum age is the safety net of a notice lost, and the size is bounded (least recently used first out).
 */

/** How long an entry is used at most, notices or not. */
export const ROUTER_COST_CACHE_MAX_AGE_MS = 30_000;
/** How many routers' costs are kept at most. */
export const ROUTER_COST_CACHE_MAX_ENTRIES = 10_000;

export interface RouterCostCache {
  /**
   * The routers' costs: those kept from memory, the others from `read` (handed the missing ids only), whose answers
   * are kept unless dropped meanwhile. A router `read` does not find is left out.
   */
  costsOf(
    routerIds: readonly string[],
    read: (missing: string[]) => Promise<ReadonlyMap<string, RouterCost>>,
  ): Promise<Map<string, RouterCost>>;
  /** Drops what the changes may have made stale (the change poll's listener; exposed for tests). */
  apply(changes: readonly CtrlChange[]): void;
  /** How many routers' costs are kept (tests). */
  readonly size: number;
}

export function createRouterCostCache(
  changes: Pick<CtrlChangePoll, 'listen'> | undefined,
  now: () => number = Date.now,
  options: { maxAgeMs?: number; maxEntries?: number } = {},
): RouterCostCache {
  const kept = createKeptReads<RouterCost>({
    maxAgeMs: options.maxAgeMs ?? ROUTER_COST_CACHE_MAX_AGE_MS,
    maxEntries: options.maxEntries ?? ROUTER_COST_CACHE_MAX_ENTRIES,
    now,
  });

  const apply = dropOnChanges(kept, changes, (change) => (change.kind === 'router-cost' ? change.routerId : undefined));

  return {
    costsOf: (routerIds, read) => kept.getMany(routerIds, read),
    apply,
    get size() {
      return kept.size;
    },
  };
}
