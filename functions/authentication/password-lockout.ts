import type { AuthPolicy } from '#shared/entities/auth-policy.ts';
import { authenticators } from '#shared/entities/authenticator.ts';
import { type Identity, identities } from '#shared/entities/identity.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import type { Deps } from '#shared/ports/deps.ts';
import {
  addToCounter,
  type CounterHolder,
  type Guard,
  partialUpdateOps,
  setCounterOp,
} from '#shared/store/partial-update.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

/** An id no authenticator has: a login for an unknown username counts its failure against it, at the same cost. */
export const NO_AUTHENTICATOR = 'none:unknown-username';

/** The lock was not written: the identity is already disabled at least as long, or it or its counter went. */
class LockNotNeeded extends ApiError {}

/**
 * The entity whose `failedAttempts` counts a credential's misses: a password's authenticator, or for MFA codes the
 * identity's MFA enrollment (one per identity, whatever the primary method of the session giving the code).
 */
export type MissCounter = CounterHolder;

/** The miss counter of a password authenticator. */
export const passwordCounter = (authenticatorId: string): MissCounter => ({
  collection: authenticators.collection,
  id: authenticatorId,
});

const FAILED_ATTEMPTS = 'failedAttempts';

/**
 * Counts a wrong password (or MFA code) against the identity's auth policy: after `maxAttempts` in a row (0 = never)
 * the identity is disabled for `lockoutDurationMinutes` (0 = until an admin enables it) and the count starts again.
 * Counting is an atomic ADD, so concurrent guesses cannot slip past the limit. A counter deleted meanwhile has
 * nothing left to count (the caller answers 401 all the same).
 */
export async function recordFailedPassword(
  deps: Deps,
  counter: MissCounter,
  identity: Identity | undefined,
  policy: AuthPolicy | undefined,
): Promise<void> {
  const attempts = await addToCounter(deps.store, counter, FAILED_ATTEMPTS, 1);
  if (attempts === undefined) return;
  const { maxAttempts = 0, lockoutDurationMinutes = 0 } = policy?.primary.updb ?? {};
  if (!identity || maxAttempts <= 0 || attempts < maxAttempts) return;
  // The default admin is how operators get back in: a stranger's guesses may lock it for a while, never for good.
  if (identity.isDefaultAdmin && lockoutDurationMinutes === 0) return;
  await lockOut(deps, counter, identity, lockoutDurationMinutes);
}

/**
 * Disables the identity for the lockout and resets the count, in one transaction. The update never shortens a disable
 * already in force (an admin's indefinite one, or a longer lock): it goes through only when the identity is enabled,
 * or disabled until an earlier time. The version moves, so a concurrent admin edit retries instead of undoing the
 * lock; sessions from before the lock stay dead even after an admin enables the identity early; the identity's `ended`
 * notice, written with the lock, has the routers drop them at once. Nothing of them is in the lock's transaction: a
 * session ended meanwhile (by its owner, who may be the one guessing) cannot cancel the lock.
 */
async function lockOut(deps: Deps, counter: MissCounter, identity: Identity, minutes: number): Promise<void> {
  const now = deps.now();
  const until = minutes === 0 ? null : new Date(now.getTime() + minutes * 60_000).toISOString();
  const notLockedLonger: Guard = {
    anyOf: [
      { field: 'disabled', equals: false },
      until === null
        ? { field: 'disabledUntil', isText: true }
        : { field: 'disabledUntil', isText: true, before: until },
    ],
  };
  const lockNotNeeded = () => new LockNotNeeded('INVALID_AUTH');
  const at = now.toISOString();
  const changes = { disabled: true, disabledAt: at, disabledUntil: until, sessionsValidFrom: at, updatedAt: at };
  try {
    await deps.store.transact([
      ...partialUpdateOps(deps.store, identities, identity, changes, notLockedLonger, lockNotNeeded),
      setCounterOp(deps.store, counter, FAILED_ATTEMPTS, 0, lockNotNeeded),
    ]);
  } catch (error) {
    if (error instanceof LockNotNeeded) return;
    throw error;
  }
  deps.metrics.count('Lockouts');
  deps.logger.warn('identity locked out after repeated wrong credentials', {
    identityId: identity.id,
    lockoutDurationMinutes: minutes,
  });
}

/**
 * The write, for the session's transaction, that ends a run of wrong passwords: a right password resets the count; an
 * authenticator deleted meanwhile fails the login (401).
 */
export function clearFailedPasswordsOp(deps: Deps, authenticatorId: string): WriteOp {
  return setCounterOp(
    deps.store,
    passwordCounter(authenticatorId),
    FAILED_ATTEMPTS,
    0,
    () => new ApiError('INVALID_AUTH'),
  );
}
