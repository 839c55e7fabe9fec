import { createHash } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ApiError } from '../errors/api-error.ts';
import type { Deps } from '../ports/deps.ts';
import { keys } from '../store/keys.ts';

/** How many attempts one key may make per window; 0 turns the limit off. */
export interface WindowLimit {
  readonly limit: number;
  readonly windowSeconds: number;
}

/** What a window's counter held after an attempt was counted: its attempts and the failures recorded in it. */
export interface WindowCount {
  readonly hits: number;
  readonly failures: number;
}

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
 * The counter item of one key in one window. Keys are hashed: usernames and addresses stay out of the table, and any
 * input, however long, makes a key DynamoDB accepts.
 */
function counterKey(scope: string, key: string, windowStart: number) {
  const digest = createHash('sha256').update(key).digest('base64url');
  return keys.rateWindow(scope, digest, windowStart);
}

function countOf(item: Record<string, unknown> | undefined): WindowCount {
  return { hits: Number(item?.hits ?? 0), failures: Number(item?.failures ?? 0) };
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
  try {
    const { Attributes } = await deps.store.db.send(
      new UpdateCommand({
        TableName: deps.store.tableName,
        Key: counterKey(scope, key, window.start),
        UpdateExpression: 'ADD hits :one SET expiresAtEpoch = :ttl',
        ConditionExpression: 'attribute_not_exists(hits) OR hits < :limit',
        ExpressionAttributeValues: { ':one': 1, ':limit': limit.limit, ':ttl': window.ttl },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return countOf(Attributes);
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    const retryAfter = Math.max(1, Math.ceil((window.end - window.nowMs) / 1000));
    throw new WindowFull(retryAfter, countOf((error as { Item?: Record<string, unknown> }).Item));
  }
}

/** Records a failed attempt of `key` in the current window (beside its attempts), for the next attempt to see. */
export async function recordFailure(deps: Deps, scope: string, key: string, limit: WindowLimit): Promise<void> {
  if (limit.limit <= 0) return;
  const window = windowOf(deps, limit.windowSeconds);
  await deps.store.db.send(
    new UpdateCommand({
      TableName: deps.store.tableName,
      Key: counterKey(scope, key, window.start),
      UpdateExpression: 'ADD failures :one SET expiresAtEpoch = :ttl',
      ExpressionAttributeValues: { ':one': 1, ':ttl': window.ttl },
    }),
  );
}
