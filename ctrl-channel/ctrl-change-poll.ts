import type { Deps } from '#shared/ports/deps.ts';
import { type CtrlChange, ctrlChangePages } from '#shared/store/ctrl-changes.ts';

/**
 * The endpoint's reading of the routers' change log (`shared/store/ctrl-changes.ts`): about once a second while it has
 * routers, every change written since the last poll (less a grace) goes, once and in order, a page at a time, to each
 * feature that listens (API sessions, router revocations). A page is marked passed on only once every listener took
 * it: after a failure (a throttled read, a listener's read failing) the next poll reads it again, so a listener may
 * see a change twice (each one's handling is idempotent: sessions set by token, a closed channel stays closed).
 */

/** How often the recent changes are read while this endpoint has routers. */
export const POLL_INTERVAL_MS = 1_000;
/**
 * How far before the last poll's instant each poll reads again: a change is written with the instant its transaction
 * was built (by its writer's clock), and may commit and become readable a moment later, after a poll past that
 * instant; this covers the transaction's own latency and retries, the eventually consistent read, and the writers'
 * clocks differing from this one's. Changes seen are skipped, so each is passed on once; each is read a few times.
 * The last poll's instant, not the newest change seen, is the mark: the last changes of a burst would otherwise be
 * read again by every poll until a newer change came.
 */
export const POLL_GRACE_MS = 3_000;
/**
 * How far back a poll reads at most: the first, and one after polls failed or the endpoint had no routers. Changes
 * older than that are lost to this endpoint's routers (each router's full state, sent when it connects, has them).
 */
const POLL_WINDOW_MS = 10_000;
/** The changes a poll reads in one page (each page passed on before the next is read). */
export const CHANGE_PAGE_SIZE = 100;

/** One line of every this many failed polls in a row (a minute's worth). */
const FAILURES_LOGGED_EVERY = 60;

/** A feature's handling of a page of changes, in the order written; a rejection fails the poll (read again next). */
export type CtrlChangeListener = (changes: readonly CtrlChange[]) => Promise<void>;

export interface CtrlChangePoll {
  /** Adds a listener of every page of new changes. */
  listen(listener: CtrlChangeListener): void;
  /** Adds work done after each poll that passed every page on (the idle sessions' sweep). */
  afterEachPoll(task: () => Promise<void>): void;
  /** Polls from now on, while `hasRouters` says so (a router connected): polling stops by itself once it has none. */
  wake(): void;
  /**
   * Resolves once a poll that began after the call has passed every change on: what was written before the call has
   * reached the listeners (tests wait on it for a write's notice rather than for a guessed while).
   */
  passed(): Promise<void>;
  close(): void;
}

export function createCtrlChangePoll(deps: Deps, hasRouters: () => boolean): CtrlChangePoll {
  const listeners: CtrlChangeListener[] = [];
  const afterTasks: (() => Promise<void>)[] = [];
  /** Changes already passed on, by key, with when they were written: the grace's reads see them again. */
  const seen = new Map<string, number>();
  /** Where the next poll reads from (epoch ms): the last poll's instant less the grace; undefined before the first. */
  let readFrom: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  /** Polls failed in a row. */
  let failures = 0;
  /**
   * Who waits (`passed`) for a poll that begins after they asked: each poll takes those waiting as it begins and lets
   * them go once it passed every page on (a failed poll hands them to the next).
   */
  let waiting: (() => void)[] = [];

  async function poll(): Promise<void> {
    const waited = waiting;
    waiting = [];
    try {
      await pollChanges();
    } catch (error) {
      waiting.push(...waited);
      throw error;
    }
    for (const resolve of waited) resolve();
  }

  async function pollChanges(): Promise<void> {
    const now = deps.now().getTime();
    const from = Math.max(readFrom ?? 0, now - POLL_WINDOW_MS);
    for await (const changes of ctrlChangePages(deps.store, new Date(from), new Date(now), CHANGE_PAGE_SIZE)) {
      const fresh = changes.filter((change) => !seen.has(change.key));
      if (fresh.length === 0) continue;
      for (const listener of listeners) await listener(fresh);
      for (const change of fresh) seen.set(change.key, Date.parse(change.at));
    }
    // Moved on only once every page was passed on: after a failed poll the next reads the same changes again.
    readFrom = now - POLL_GRACE_MS;
    for (const [key, at] of seen) if (at < readFrom) seen.delete(key);
    for (const task of afterTasks) await task();
  }

  /** Polls while this endpoint has routers: each poll after the last has ended, so they never overlap. */
  function schedule(): void {
    if (timer !== undefined || closed) return;
    timer = setTimeout(() => {
      poll()
        .then(() => {
          failures = 0;
        })
        .catch((error: unknown) => {
          // A table that fails does so at every poll: its first failure, then one line a minute.
          if (failures++ % FAILURES_LOGGED_EVERY === 0) {
            deps.logger.warn('ctrl changes not read', {
              failedPolls: failures,
              detail: error instanceof Error ? error.message : String(error),
            });
          }
        })
        .finally(() => {
          timer = undefined;
          if (hasRouters()) schedule();
        });
    }, POLL_INTERVAL_MS);
    timer.unref();
  }

  return {
    listen: (listener) => listeners.push(listener),
    afterEachPoll: (task) => afterTasks.push(task),
    wake: schedule,
    passed() {
      schedule();
      return new Promise((resolve) => waiting.push(resolve));
    },
    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
