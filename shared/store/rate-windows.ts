import { createHash } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Store } from './entity-store.ts';
import { keys } from './keys.ts';
import { isConditionFailure } from './table-client.ts';

/**
 * The counters of fixed-window rate limits (`shared/rate-limit/`): one item per key and window, shared by every Lambda
 * instance, expiring through the table's TTL attribute. Keys are hashed, so usernames and addresses stay out of the
 * table and any input makes a key DynamoDB accepts.
 */

/** One window of one key: where it starts (ms) and when its item may go (epoch seconds). */
export interface WindowSlot {
  readonly scope: string;
  readonly key: string;
  readonly start: number;
  readonly expiresAtEpoch: number;
}

function windowKey(slot: WindowSlot) {
  return keys.rateWindow(slot.scope, createHash('sha256').update(slot.key).digest('base64url'), slot.start);
}

/**
 * Counts one attempt in the window with one conditional UpdateItem while the window holds fewer than `limit`: the
 * window's attempts with this one, or undefined (not counted) when it is full.
 */
export async function countInWindow(store: Store, slot: WindowSlot, limit: number): Promise<number | undefined> {
  try {
    const { Attributes } = await store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: windowKey(slot),
        UpdateExpression: 'ADD hits :one SET expiresAtEpoch = :ttl',
        ConditionExpression: 'attribute_not_exists(hits) OR hits < :limit',
        ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':ttl': slot.expiresAtEpoch },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.hits ?? 1);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return undefined;
  }
}

/**
 * Takes one counted attempt back out of its window. Never below zero, and never an item of its own: a window that has
 * gone (or was never counted in) is left alone.
 */
export async function giveBackInWindow(store: Store, slot: WindowSlot): Promise<void> {
  try {
    await store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: windowKey(slot),
        UpdateExpression: 'ADD hits :minusOne',
        ConditionExpression: 'hits > :zero',
        ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
