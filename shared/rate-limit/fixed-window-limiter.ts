import { ApiError } from '../errors/api-error.ts';
import type { Deps } from '../ports/deps.ts';
import { addFailureInWindow, countInWindow, type WindowSlot, type WindowTally } from '../store/rate-windows.ts';

/** How many attempts one key may make per window; 0 turns the limit off. */
export interface WindowLimit {
  readonly limit: number;
  readonly windowSeconds: number;
}

/** What a window's counter held after an attempt was counted: its attempts and the failures recorded in it. */
export type WindowCount = WindowTally;

/** A full window: the attempt was refused with 429 and `Retry-After`; `count` is what the window held. */
export class WindowFull extends ApiError {
  readonly count: WindowCount;
  constructor(retryAfterSeconds: number, count: WindowCount) {
    super('SERVER_TOO_MANY_REQUESTS', {
      message: 'Too many attempts; try again later.',
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
    this.count = count;
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
export async function countAttempt(deps: Deps, scope: string, key: string, limit: WindowLimit): Promise<WindowCount> {
  if (limit.limit <= 0) return { hits: 0, failures: 0 };
  const window = windowOf(deps, limit.windowSeconds);
  const { counted, tally } = await countInWindow(deps.store, slotOf(scope, key, window), limit.limit);
  if (counted) return tally;
  const retryAfter = Math.max(1, Math.ceil((window.end - window.nowMs) / 1000));
  throw new WindowFull(retryAfter, tally);
}

/** Records a failed attempt of `key` in the current window (beside its attempts), for the next attempt to see. */
export async function recordFailure(deps: Deps, scope: string, key: string, limit: WindowLimit): Promise<void> {
  if (limit.limit <= 0) return;
  await addFailureInWindow(deps.store, slotOf(scope, key, windowOf(deps, limit.windowSeconds)));
}

function slotOf(scope: string, key: string, window: ReturnType<typeof windowOf>): WindowSlot {
  return { scope, key, start: window.start, expiresAtEpoch: window.ttl };
}
