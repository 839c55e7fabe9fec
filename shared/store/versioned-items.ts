import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { ApiError } from '../errors/api-error.ts';
import type { Store } from './entity-store.ts';
import { readOptions } from './read-consistency.ts';
import type { WriteOp } from './write-op.ts';

/**
 * Items kept per owner outside the kit (an API session's posture data, an identity's failed service requests): read by
 * key, written whole under the version read (optimistic locking), removed with their owner.
 */

type Key = { readonly PK: string; readonly SK: string };

/** The item under `key`, read strongly consistently; undefined when there is none. */
export async function readItem(store: Store, key: Key): Promise<Record<string, unknown> | undefined> {
  const { Item } = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: key, ...readOptions('versionedItem') }),
  );
  return Item;
}

/**
 * The write that stores `item` (its key included) as version `readVersion + 1`: only when the item is still at the
 * version read (or, read as 0, still absent); otherwise `onConflict`.
 */
export function versionedPutOp(
  store: Store,
  item: Key & Record<string, unknown>,
  readVersion: number,
  onConflict: () => ApiError,
): WriteOp {
  return {
    item: {
      Put: {
        TableName: store.tableName,
        Item: { ...item, version: readVersion + 1 },
        ...(readVersion === 0
          ? { ConditionExpression: 'attribute_not_exists(PK)' }
          : { ConditionExpression: 'version = :version', ExpressionAttributeValues: { ':version': readVersion } }),
      },
    },
    onConditionFailed: onConflict,
  };
}

/** The write that removes the item under `key`, whatever it holds. */
export function deleteItemOp(store: Store, key: Key): WriteOp {
  return { item: { Delete: { TableName: store.tableName, Key: key } } };
}
