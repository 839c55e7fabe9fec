import type { Terminator } from '#shared/entities/terminator.ts';
import type { CtrlChange } from '#shared/store/ctrl-changes.ts';
import type { CtrlChangePoll } from './ctrl-change-poll.ts';
import { createKeptReads, dropOnChanges } from './kept-reads.ts';

/**
 * What an endpoint keeps in memory of a dial's terminator reads (mesh design G.1.4, step 8): each service's stored
 * terminators (the query of its terminator ids and the batch read of them), so a circuit's choice of a terminator
 * reads nothing while they stay as they are. Whether each terminator's router is online is not kept here: the
 * endpoint's presence answers it (`router-presence.ts`). An entry is dropped by the change log's notices
 * (`ctrl-change-poll.ts`), within the second or two the log takes:
 *
 * - `terminators` names the service of every terminator write (a router's Bind, update or unbind, its sweep of those
 *   not re-sent, the management API's, a service's or router's delete taking its terminators, the integrity fix's):
 *   the kit writes it with every write of the type (`EntityDefinition.routerNotices`), so no path misses it;
 * - the other notices this version writes change no terminator;
 * - any other kind, one this module does not know, drops every entry.
 *
 * A route attempt that fails drops its service's entry (`forget`), so the retry reads afresh rather than choosing
 * again a terminator its router no longer hosts. A short maximum age is the safety net of a notice lost, and the size
 * is bounded (least recently used first out).
 */

/** How long an entry is used at most, notices or not. */
export const TERMINATOR_CACHE_MAX_AGE_MS = 30_000;
/** How many services' terminators are kept at most. */
export const TERMINATOR_CACHE_MAX_ENTRIES = 10_000;

export interface TerminatorCache {
  /** The service's stored terminators: from memory, else from `read`, whose answer is kept unless dropped meanwhile. */
  ofService(serviceId: string, read: () => Promise<readonly Terminator[]>): Promise<readonly Terminator[]>;
  /** Drops the service's entry: a route to one of its terminators failed, and the next attempt reads afresh. */
  forget(serviceId: string): void;
  /** Drops what the changes may have made stale (the change poll's listener; exposed for tests). */
  apply(changes: readonly CtrlChange[]): void;
  /** How many services' terminators are kept (tests). */
  readonly size: number;
}

export function createTerminatorCache(
  changes: Pick<CtrlChangePoll, 'listen'> | undefined,
  now: () => number = Date.now,
  options: { maxAgeMs?: number; maxEntries?: number } = {},
): TerminatorCache {
  const kept = createKeptReads<readonly Terminator[]>({
    maxAgeMs: options.maxAgeMs ?? TERMINATOR_CACHE_MAX_AGE_MS,
    maxEntries: options.maxEntries ?? TERMINATOR_CACHE_MAX_ENTRIES,
    now,
  });

  const apply = dropOnChanges(kept, changes, (change) =>
    change.kind === 'terminators' ? change.serviceId : undefined,
  );

  return {
    async ofService(serviceId, read) {
      const found = await kept.getMany([serviceId], async () => new Map([[serviceId, await read()]]));
      return found.get(serviceId) ?? [];
    },
    forget: (serviceId) => kept.drop(serviceId),
    apply,
    get size() {
      return kept.size;
    },
  };
}
