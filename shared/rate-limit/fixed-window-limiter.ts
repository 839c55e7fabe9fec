import { createHash } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Deps } from '../deps.ts';
import { ApiError } from '../http/api-error.ts';

/** How many attempts one key may make per window; 0 turns the limit off. */
export interface WindowLimit {
  readonly limit: number;
  readonly windowSeconds: number;
}

/**
 * The counter item of one key in one window. Keys are hashed: usernames and addresses stay out of the table, and any
 * input, however long, makes a key DynamoDB accepts.
 */
function counterKey(scope: string, key: string, windowStart: number) {
  const digest = createHash('sha256').update(key).digest('base64url');
  return { PK: `RATE#${scope}#${digest}`, SK: `W#${windowStart}` };
}

/**
 * Counts one attempt of `key` in the current fixed window with one conditional UpdateItem, so every Lambda instance
 * shares the count; when the window is full the attempt is refused with 429 `SERVER_TOO_MANY_REQUESTS` (the
 * reference's code for its auth limiter) and `Retry-After` (seconds to the window's end). Items expire through the
 * table's TTL attribute a window after theirs ends.
 */
export async function countAttempt(deps: Deps, scope: string, key: string, window: WindowLimit): Promise<void> {
  if (window.limit <= 0) return;
  const nowMs = deps.now().getTime();
  const windowMs = window.windowSeconds * 1000;
  const windowStart = Math.floor(nowMs / windowMs) * windowMs;
  const windowEnd = windowStart + windowMs;
  try {
    await deps.store.db.send(
      new UpdateCommand({
        TableName: deps.store.tableName,
        Key: counterKey(scope, key, windowStart),
        UpdateExpression: 'ADD hits :one SET expiresAtEpoch = :ttl',
        ConditionExpression: 'attribute_not_exists(hits) OR hits < :limit',
        ExpressionAttributeValues: {
          ':one': 1,
          ':limit': window.limit,
          ':ttl': Math.ceil((windowEnd + windowMs) / 1000),
        },
      }),
    );
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    const retryAfter = Math.max(1, Math.ceil((windowEnd - nowMs) / 1000));
    throw new ApiError('SERVER_TOO_MANY_REQUESTS', {
      message: 'Too many attempts; try again later.',
      headers: { 'retry-after': String(retryAfter) },
    });
  }
}
