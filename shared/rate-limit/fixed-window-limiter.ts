import { ApiError } from '../errors/api-error.ts';
import type { Deps } from '../ports/deps.ts';
import { countInWindow, giveBackInWindow, type WindowSlot } from '../store/rate-windows.ts';

/** How many attempts one key may make per window; 0 turns the limit off. */
export interface WindowLimit {
  readonly limit: number;
  readonly windowSeconds: number;
}

/** An attempt counted in a window: the window's attempts with it, and where it was counted (none: limit off). */
export interface CountedAttempt {
  readonly hits: number;
  readonly slot: WindowSlot | undefined;
}

/** A full window: the attempt was refused with 429 and `Retry-After`. */
export class WindowFull extends ApiError {
  constructor(retryAfterSeconds: number) {
    super('SERVER_TOO_MANY_REQUESTS', {
      message: 'Too many attempts; try again later.',
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

function windowOf(deps: Deps, windowSeconds: number) {
  const nowMs = deps.now().getTime();
  const windowMs = windowSeconds * 1000;
  const start = Math.floor(nowMs / windowMs) * windowMs;
  return { nowMs, start, end: start + windowMs, ttl: Math.ceil((start + 2 * windowMs) / 1000) };
}

/**
 * Counts one attempt of `key` in the current fixed window with one conditional UpdateItem, so every Lambda instance
 * shares the count; when the window is full the attempt is refused with {@link WindowFull} (429
 * `SERVER_TOO_MANY_REQUESTS`, the reference's code for its auth limiter, and `Retry-After`: seconds to the window's
 * end). Items expire through the table's TTL attribute a window after theirs ends.
 */
export async function countAttempt(
  deps: Deps,
  scope: string,
  key: string,
  limit: WindowLimit,
): Promise<CountedAttempt> {
  if (limit.limit <= 0) return { hits: 0, slot: undefined };
  const window = windowOf(deps, limit.windowSeconds);
  const slot: WindowSlot = { scope, key, start: window.start, expiresAtEpoch: window.ttl };
  const hits = await countInWindow(deps.store, slot, limit.limit);
  if (hits !== undefined) return { hits, slot };
  throw new WindowFull(Math.max(1, Math.ceil((window.end - window.nowMs) / 1000)));
}

/**
 * Gives a counted attempt back to the window it was counted in (one UpdateItem): an attempt that should not have
 * spent the budget after all, such as a right code or one refused by another limit.
 */
export async function giveBack(deps: Deps, attempt: CountedAttempt): Promise<void> {
  if (attempt.slot) await giveBackInWindow(deps.store, attempt.slot);
}
