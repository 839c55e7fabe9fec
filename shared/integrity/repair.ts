import type { Deps } from '../ports/deps.ts';
import { backOff, ConcurrentModificationError } from '../store/entity-store.ts';
import { conflictedWithAnotherTransaction, type WriteOp } from '../store/write-op.ts';

/**
 * How often a fix writes one repair before reporting it not fixed. The segments of a fix run at once, and a repair
 * can lose to another segment's repair of the same items (a child deleted whole while another segment removes its
 * markers one by one) or to an API write; each loss is planned again from a fresh read.
 */
export const REPAIR_ATTEMPTS = 5;
/** The back-off ceiling before the first retry, doubling after each (jittered: see `backOff`). */
export const REPAIR_BACK_OFF_MS = 20;

/**
 * Plans the writes of one repair: from the scan's reading when `fresh` is false (the first attempt), from a fresh read
 * when it is true (after losing to a concurrent writer). No writes means the finding no longer holds: a concurrent
 * writer set it right meanwhile, which is what the repair was for.
 */
export type RepairPlan = (fresh: boolean) => Promise<readonly WriteOp[]> | readonly WriteOp[];

/**
 * Whether a repair lost to a concurrent writer: a condition it was guarded by no longer held (the item it meant to
 * remove was already removed, the entity changed), or its transaction kept conflicting with others past the store's
 * own retries.
 */
function lostToConcurrentWriter(error: unknown): boolean {
  if (error instanceof ConcurrentModificationError) return true;
  return conflictedWithAnotherTransaction(error);
}

/**
 * Writes a repair, planning it again from a fresh read each time it loses to a concurrent writer, up to
 * `REPAIR_ATTEMPTS` times; throws the last loss (or any other error) when it cannot be written.
 */
export async function writeRepair(deps: Deps, plan: RepairPlan): Promise<void> {
  let ops = await plan(false);
  for (let attempt = 1; ; attempt++) {
    try {
      if (ops.length > 0) await deps.store.transact(ops);
      return;
    } catch (error) {
      if (!lostToConcurrentWriter(error) || attempt >= REPAIR_ATTEMPTS) throw error;
    }
    await backOff(attempt - 1, REPAIR_BACK_OFF_MS);
    ops = await plan(true);
  }
}
