import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Deps } from '#shared/deps.ts';
import { authPolicies } from '#shared/entities/auth-policy.ts';
import { type Authenticator, authenticators } from '#shared/entities/authenticator.ts';
import { identities } from '#shared/entities/identity.ts';
import { keys } from '#shared/store/keys.ts';

/**
 * Counts a wrong password against the identity's auth policy: after `maxAttempts` in a row (0 = never) the identity
 * is disabled for `lockoutDurationMinutes` (0 = until an admin enables it) and the count starts again. Counting is an
 * atomic ADD, so concurrent guesses cannot slip past the limit.
 */
export async function recordFailedPassword(deps: Deps, authenticator: Authenticator): Promise<void> {
  const identity = await deps.store.get(identities, authenticator.identityId);
  const policy = identity ? await deps.store.get(authPolicies, identity.doc.authPolicyId) : undefined;
  const { maxAttempts, lockoutDurationMinutes } = policy?.doc.primary.updb ?? {
    maxAttempts: 0,
    lockoutDurationMinutes: 0,
  };
  if (!identity || maxAttempts <= 0) return;

  const { Attributes } = await deps.store.db.send(
    new UpdateCommand({
      TableName: deps.store.tableName,
      Key: keys.entity(authenticators.collection, authenticator.id),
      UpdateExpression: 'ADD failedAttempts :one',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  if (Number(Attributes?.failedAttempts ?? 0) < maxAttempts) return;

  const now = deps.now();
  const disabledUntil =
    lockoutDurationMinutes === 0 ? null : new Date(now.getTime() + lockoutDurationMinutes * 60_000).toISOString();
  await deps.store.transact([
    {
      item: {
        Update: {
          TableName: deps.store.tableName,
          Key: keys.entity(identities.collection, identity.doc.id),
          // The version moves so a concurrent admin edit of the identity retries instead of undoing the lock.
          UpdateExpression:
            'SET disabled = :true, disabledAt = :now, disabledUntil = :until, updatedAt = :now ADD version :one',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':true': true, ':now': now.toISOString(), ':until': disabledUntil, ':one': 1 },
        },
      },
    },
    {
      item: {
        Update: {
          TableName: deps.store.tableName,
          Key: keys.entity(authenticators.collection, authenticator.id),
          UpdateExpression: 'SET failedAttempts = :zero',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':zero': 0 },
        },
      },
    },
  ]);
  deps.logger.warn('identity locked out after repeated wrong passwords', {
    identityId: identity.doc.id,
    lockoutDurationMinutes,
  });
}

/** A right password ends the run of wrong ones. */
export async function clearFailedPasswords(deps: Deps, authenticator: Authenticator): Promise<void> {
  if (!authenticator.failedAttempts) return;
  await deps.store.db.send(
    new UpdateCommand({
      TableName: deps.store.tableName,
      Key: keys.entity(authenticators.collection, authenticator.id),
      UpdateExpression: 'SET failedAttempts = :zero',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':zero': 0 },
    }),
  );
}
