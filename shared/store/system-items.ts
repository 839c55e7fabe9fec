import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Store } from './entity-store.ts';
import { keys, type SystemItem } from './keys.ts';
import { readOptions } from './read-consistency.ts';
import { unlessConditionFails } from './table-client.ts';
import type { WriteOp } from './write-op.ts';

/**
 * The controller's singletons (`keys.system`): the network CA, the server certificate and its ACM import, the
 * default admin's marker. Each is one item, read strongly consistently, owned by the module that names it.
 */

export async function readSystemItem(store: Store, name: SystemItem): Promise<Record<string, unknown> | undefined> {
  const { Item } = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: keys.system(name), ...readOptions('systemItem') }),
  );
  return Item;
}

/** Writes the singleton whole. */
export async function writeSystemItem(store: Store, name: SystemItem, fields: Record<string, unknown>): Promise<void> {
  await store.db.send(new PutCommand({ TableName: store.tableName, Item: { ...fields, ...keys.system(name) } }));
}

/** Writes the singleton unless it exists; false when it did (another writer's first write won). */
export async function createSystemItem(
  store: Store,
  name: SystemItem,
  fields: Record<string, unknown>,
): Promise<boolean> {
  const written = await unlessConditionFails(
    store.db.send(
      new PutCommand({
        TableName: store.tableName,
        Item: { ...fields, ...keys.system(name) },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    ),
  );
  return written !== undefined;
}

/** The same in a transaction: the singleton is created with the rest, or the transaction fails on `onExists`. */
export function createSystemItemOp(
  store: Store,
  name: SystemItem,
  fields: Record<string, unknown>,
  onExists: WriteOp['onConditionFailed'],
): WriteOp {
  return {
    item: {
      Put: {
        TableName: store.tableName,
        Item: { ...fields, ...keys.system(name) },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    ...(onExists ? { onConditionFailed: onExists } : {}),
  };
}
