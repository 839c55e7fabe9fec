import { newId } from '../ids.ts';
import type { Deps } from '../ports/deps.ts';
import { ctrlChangePages } from '../store/ctrl-changes.ts';
import { readSystemItem, releaseSystemLease, setWhileLeased, takeSystemLease } from '../store/system-items.ts';
import { removeEndedSessions } from './api-session-store.ts';

/**
 * The removal from the table of the sessions a change ended, out of the change's request: a disable, a lockout, a
 * revocation or a delete commits its `ended` notice to the routers' change log in its own transaction (nothing
 * per session: an identity may have thousands), the routers drop the sessions at once (the endpoints read the
 * notice), the controller refuses them from the commit on (`isRevoked`), the function that made the change removes
 * the first transaction's worth, and this sweep, run every minute (a scheduled function on AWS, a timer locally),
 * removes the rest, a transaction at a time, resuming where its last run left off. A notice whose removal fails is
 * logged and left for the next run, the others swept meanwhile, for as long as the log keeps it (an hour); what is
 * left after that ends on use, by the list, or by its TTL.
 */

const SWEEP = 'ended-sessions-sweep';
/** How long after its instant a notice is first swept: an identity's index may lag a moment behind its sessions. */
const SETTLE_MS = 5_000;
/**
 * How far before the last run's mark each run reads again: a notice is written with its writer's clock and may commit
 * a moment after its instant; a notice read twice removes nothing the second time.
 */
const OVERLAP_MS = 10_000;
/** How far back a run reads at most (the first, or one after runs failed for long): the log's lifetime. */
const WINDOW_MS = 3_600_000;
/**
 * How long a run may hold the sweep: a function's longest run (15 minutes), so a run that died frees it by then. Two
 * runs at once would read the same notices and remove the same sessions, their transactions cancelling each other's.
 */
export const SWEEP_LEASE_MS = 15 * 60_000;
const PAGE_SIZE = 100;

/** What a run did: the notices it swept, those it could not (left for the next run), or that another run was on. */
export interface SweepResult {
  readonly notices: number;
  readonly failed: number;
  readonly busy?: true;
}

/**
 * One run: every `ended` notice since the last run's mark (less the overlap) and settled, its sessions removed; the
 * mark moves on after each page, up to the first notice that failed. Nothing when another run holds the sweep.
 */
export async function sweepEndedSessions(deps: Deps): Promise<SweepResult> {
  const now = deps.now().getTime();
  const holder = newId();
  if (!(await takeSystemLease(deps.store, SWEEP, holder, now + SWEEP_LEASE_MS, now))) {
    return { notices: 0, failed: 0, busy: true };
  }
  try {
    const mark = (await readSystemItem(deps.store, SWEEP))?.sweptUntil;
    const from = Math.max(typeof mark === 'number' ? mark - OVERLAP_MS : 0, now - WINDOW_MS);
    const until = now - SETTLE_MS;
    let notices = 0;
    let failedAt: number | undefined;
    let failed = 0;
    for await (const changes of ctrlChangePages(deps.store, new Date(from), new Date(until), PAGE_SIZE)) {
      for (const change of changes) {
        const at = Date.parse(change.at);
        if (change.kind !== 'ended' || at > until) continue;
        try {
          await removeEndedSessions(deps, change.ended);
          notices += 1;
        } catch (error) {
          failed += 1;
          failedAt ??= at;
          deps.logger.warn('ended sessions not swept, left for the next run', {
            identityId: change.ended.identityId,
            detail: error instanceof Error ? error.message : String(error),
          });
        }
      }
      const lastAt = Date.parse(changes.at(-1)!.at);
      await setWhileLeased(deps.store, SWEEP, holder, { sweptUntil: failedAt ?? Math.min(lastAt, until) });
    }
    await setWhileLeased(deps.store, SWEEP, holder, { sweptUntil: failedAt ?? until });
    return { notices, failed };
  } finally {
    await releaseSystemLease(deps.store, SWEEP, holder);
  }
}
