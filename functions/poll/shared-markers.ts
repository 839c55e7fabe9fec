import { RecentMap } from '#shared/recent-map.ts';
import { itemKeyOf } from '#shared/store/derived-items.ts';
import type { ItemKey } from '#shared/store/write-op.ts';

/**
 * The change markers that many identities poll (the global one, one per role attribute), as this function instance
 * last read them, so a fleet's polls do not each read them again: every device answering to `#fleet` would otherwise
 * read the same `#fleet` marker once a minute. An identity's own marker (`@id`) is never kept: it is one poll's alone.
 *
 * A marker kept is trusted for {@link SHARED_MARKER_LIFETIME_MS} after it was read, so a change of a service or a
 * policy reaches a poll at most that much later than it would by reading; the poll already reads eventually
 * consistent (a few hundred ms), and an SDK polls once a minute, so the change reaches the device a minute later at
 * worst either way. The reference answers from an in-memory map its change events fill after the change commits. The
 * clock is the request's (`deps.now`). Bounded: past {@link MAX_SHARED_MARKERS}, the oldest read goes first.
 */
export const SHARED_MARKER_LIFETIME_MS = 1_000;

/** More than the role attributes of a network's identities, so the bound is a backstop, not a working limit. */
const MAX_SHARED_MARKERS = 10_000;

type Item = Record<string, unknown>;

interface Kept {
  readonly item: Item | undefined;
  readonly readAt: number;
}

const kept = new RecentMap<string, Kept>(MAX_SHARED_MARKERS);

/** The marker as read less than the lifetime before `now` (undefined `item`: none was stored); undefined if none is. */
export function keptMarker(key: ItemKey, now: Date): Kept | undefined {
  const found = kept.get(itemKeyOf(key));
  const age = found ? now.getTime() - found.readAt : Number.NaN;
  // A clock moved back (a test's) trusts nothing it cannot date.
  return found && age >= 0 && age < SHARED_MARKER_LIFETIME_MS ? found : undefined;
}

/**
 * The marker as last kept, whatever its age: for a request whose read of its caller left it out as held (`keptMarker`
 * at that instant), so a lifetime that ends during the request does not cost it a second read wave.
 */
export function lastKeptMarker(key: ItemKey): Kept | undefined {
  return kept.get(itemKeyOf(key));
}

/** Keeps markers just read (undefined: none stored), forgetting the oldest past the bound. */
export function keepMarkers(read: readonly (readonly [ItemKey, Item | undefined])[], now: Date): void {
  for (const [key, item] of read) kept.set(itemKeyOf(key), { item, readAt: now.getTime() });
}
