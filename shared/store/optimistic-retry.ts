import { backOff, ConcurrentModificationError } from './entity-store.ts';

/**
 * How often a read-modify-write that lost to a concurrent writer runs again (with back-off): bursts of a few dozen
 * updates of one entity from clients that do not retry (the ziti CLI, Terraform) all get through.
 */
const OPTIMISTIC_ATTEMPTS = 12;

/** Runs a read-modify-write again when a concurrent writer got there first. */
export async function withOptimisticRetry<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ConcurrentModificationError) || tries >= OPTIMISTIC_ATTEMPTS) throw error;
      await backOff(tries - 1);
    }
  }
}
