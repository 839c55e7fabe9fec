import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AuthPolicy } from '#shared/entities/auth-policy.ts';
import { authenticators } from '#shared/entities/authenticator.ts';
import { type Identity, identities } from '#shared/entities/identity.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { keys } from '#shared/store/keys.ts';

/** An id no authenticator has: a login for an unknown username counts its failure against it, at the same cost. */
export const NO_AUTHENTICATOR = 'none:unknown-username';

function isConditionFailure(error: unknown): boolean {
  return (error as { name?: string }).name === 'ConditionalCheckFailedException';
}

/** The lock was not written: the identity is already disabled at least as long, or it or its counter went. */
class LockNotNeeded extends ApiError {}

/**
 * The entity whose `failedAttempts` counts a credential's misses: a password's authenticator, or for MFA codes the
 * identity's MFA enrollment (one per identity, whatever the primary method of the session giving the code).
 */
export interface MissCounter {
  readonly collection: string;
  readonly id: string;
}

/** The miss counter of a password authenticator. */
export const passwordCounter = (authenticatorId: string): MissCounter => ({
  collection: authenticators.collection,
  id: authenticatorId,
});

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
  let attempts: number;
  try {
    const { Attributes } = await deps.store.db.send(
      new UpdateCommand({
        TableName: deps.store.tableName,
        Key: keys.entity(counter.collection, counter.id),
        UpdateExpression: 'ADD failedAttempts :one',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    attempts = Number(Attributes?.failedAttempts ?? 0);
  } catch (error) {
    if (isConditionFailure(error)) return;
    throw error;
  }
  const { maxAttempts = 0, lockoutDurationMinutes = 0 } = policy?.primary.updb ?? {};
  if (!identity || maxAttempts <= 0 || attempts < maxAttempts) return;
  // The default admin is how operators get back in: a stranger's guesses may lock it for a while, never for good.
  if (identity.isDefaultAdmin && lockoutDurationMinutes === 0) return;
  await lockOut(deps, counter, identity, lockoutDurationMinutes);
}

/**
 * Disables the identity for the lockout and resets the count, in one transaction. The update never shortens a disable
 * already in force (an admin's indefinite one, or a longer lock): its condition lets it through only when the identity
 * is enabled, or disabled until an earlier time.
 */
async function lockOut(deps: Deps, counter: MissCounter, identity: Identity, minutes: number): Promise<void> {
  const now = deps.now();
  const until = minutes === 0 ? null : new Date(now.getTime() + minutes * 60_000).toISOString();
  const longer =
    until === null
      ? 'attribute_type(disabledUntil, :string)'
      : '(attribute_type(disabledUntil, :string) AND disabledUntil < :until)';
  try {
    await deps.store.transact([
      {
        item: {
          Update: {
            TableName: deps.store.tableName,
            Key: keys.entity(identities.collection, identity.id),
            // The version moves so a concurrent admin edit of the identity retries instead of undoing the lock.
            // Sessions from before the lock stay dead even after an admin enables the identity early.
            UpdateExpression:
              'SET disabled = :true, disabledAt = :now, disabledUntil = :until, sessionsValidFrom = :now, updatedAt = :now ADD version :one',
            ConditionExpression: `attribute_exists(PK) AND (disabled = :false OR ${longer})`,
            ExpressionAttributeValues: {
              ':true': true,
              ':false': false,
              ':now': now.toISOString(),
              ':until': until,
              ':one': 1,
              ':string': 'S',
            },
          },
        },
        onConditionFailed: () => new LockNotNeeded('INVALID_AUTH'),
      },
      // The identity's filter record, which lists filter on, follows the change (from the identity as read: an admin
      // edit racing the lock can leave the record a write behind, until the identity's next write).
      ...deps.store.filterRecordOps(identities, {
        ...identity,
        disabled: true,
        disabledAt: now.toISOString(),
        disabledUntil: until,
        sessionsValidFrom: now.toISOString(),
        updatedAt: now.toISOString(),
      }),
      {
        item: {
          Update: {
            TableName: deps.store.tableName,
            Key: keys.entity(counter.collection, counter.id),
            UpdateExpression: 'SET failedAttempts = :zero',
            ConditionExpression: 'attribute_exists(PK)',
            ExpressionAttributeValues: { ':zero': 0 },
          },
        },
        onConditionFailed: () => new LockNotNeeded('INVALID_AUTH'),
      },
    ]);
  } catch (error) {
    if (error instanceof LockNotNeeded) return;
    throw error;
  }
  deps.logger.warn('identity locked out after repeated wrong credentials', {
    identityId: identity.id,
    lockoutDurationMinutes: minutes,
  });
}

/** A right password ends the run of wrong ones; an authenticator deleted meanwhile fails the login (401). */
export async function clearFailedPasswords(deps: Deps, authenticatorId: string): Promise<void> {
  try {
    await deps.store.db.send(
      new UpdateCommand({
        TableName: deps.store.tableName,
        Key: keys.entity(authenticators.collection, authenticatorId),
        UpdateExpression: 'SET failedAttempts = :zero',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new ApiError('INVALID_AUTH');
    throw error;
  }
}
