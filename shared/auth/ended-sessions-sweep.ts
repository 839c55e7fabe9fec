import type { Deps } from '../ports/deps.ts';
import { ctrlChangePages } from '../store/ctrl-changes.ts';
import { readSystemItem, writeSystemItem } from '../store/system-items.ts';
import { removeEndedSessions } from './api-session-store.ts';

/**
 * The removal from the table of the sessions a change ended, out of the change's request: a disable, a lockout, a
 * revocation or a delete commits its `ended` notice to the routers' change log in its own transaction (nothing
 * per session: an identity may have thousands), the routers drop the sessions at once (the endpoints read the
 * notice), the controller refuses them from the commit on (`isRevoked`), and this sweep, run every minute (a
 * scheduled function on AWS, a timer locally), removes them, a transaction at a time, resuming where its last run
 * ended. A notice whose removal fails stops the run where it is: the next one tries it again, for as long as the log
 * keeps it (an hour); what is left after that ends on use, by the list, or by its TTL.
 */

/** How long after its instant a notice is first swept: an identity's index may lag a moment behind its sessions. */
const SETTLE_MS = 5_000;
/**
 * How far before the last run's mark each run reads again: a notice is written with its writer's clock and may commit
 * a moment after its instant; a notice read twice removes nothing the second time.
 */
const OVERLAP_MS = 10_000;
/** How far back a run reads at most (the first, or one after runs failed for long): the log's lifetime. */
const WINDOW_MS = 3_600_000;
const PAGE_SIZE = 100;

/** What a run did: the notices it swept. */
export interface SweepResult {
  readonly notices: number;
}

/** One run: every `ended` notice since the last run's mark (less the overlap) and settled, its sessions removed. */
export async function sweepEndedSessions(deps: Deps): Promise<SweepResult> {
  const now = deps.now().getTime();
  const mark = (await readSystemItem(deps.store, 'ended-sessions-sweep'))?.sweptUntil;
  const from = Math.max(typeof mark === 'number' ? mark - OVERLAP_MS : 0, now - WINDOW_MS);
  const until = now - SETTLE_MS;
  let notices = 0;
  for await (const changes of ctrlChangePages(deps.store, new Date(from), new Date(until), PAGE_SIZE)) {
    for (const change of changes) {
      if (change.kind !== 'ended' || Date.parse(change.at) > until) continue;
      await removeEndedSessions(deps, change.ended);
      notices += 1;
    }
  }
  await writeSystemItem(deps.store, 'ended-sessions-sweep', { sweptUntil: until });
  return { notices };
}
