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

/** What a window's item held: its attempts and the failures recorded in it. */
export interface WindowTally {
  readonly hits: number;
  readonly failures: number;
}

function windowKey(slot: WindowSlot) {
  return keys.rateWindow(slot.scope, createHash('sha256').update(slot.key).digest('base64url'), slot.start);
}

function tallyOf(item: Record<string, unknown> | undefined): WindowTally {
  return { hits: Number(item?.hits ?? 0), failures: Number(item?.failures ?? 0) };
}

/**
 * Counts one attempt in the window with one conditional UpdateItem: counted (and the new tally) while the window
 * holds fewer than `limit`, else not counted (and the tally as it was).
 */
export async function countInWindow(
  store: Store,
  slot: WindowSlot,
  limit: number,
): Promise<{ readonly counted: boolean; readonly tally: WindowTally }> {
  try {
    const { Attributes } = await store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: windowKey(slot),
        UpdateExpression: 'ADD hits :one SET expiresAtEpoch = :ttl',
        ConditionExpression: 'attribute_not_exists(hits) OR hits < :limit',
        ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':ttl': slot.expiresAtEpoch },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { counted: true, tally: tallyOf(Attributes) };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    return { counted: false, tally: tallyOf((error as { Item?: Record<string, unknown> }).Item) };
  }
}

/** Records a failure in the window, beside its attempts. */
export async function addFailureInWindow(store: Store, slot: WindowSlot): Promise<void> {
  await store.db.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: windowKey(slot),
      UpdateExpression: 'ADD failures :one SET expiresAtEpoch = :ttl',
      ExpressionAttributeValues: { ':one': 1, ':ttl': slot.expiresAtEpoch },
    }),
  );
}
