import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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

/**
 * Takes a singleton's lease for `holder` until `until` (epoch ms): when nobody holds it, or its holder's ran out (a
 * run that died). False when another holds it now. The item is created if missing.
 */
export async function takeSystemLease(
  store: Store,
  name: SystemItem,
  holder: string,
  until: number,
  now: number,
): Promise<boolean> {
  const taken = await unlessConditionFails(
    store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.system(name),
        UpdateExpression: 'SET leaseHolder = :holder, leaseUntil = :until',
        ConditionExpression: 'attribute_not_exists(leaseUntil) OR leaseUntil < :now',
        ExpressionAttributeValues: { ':holder': holder, ':until': until, ':now': now },
      }),
    ),
  );
  return taken !== undefined;
}

/** Sets fields of a singleton while `holder` holds its lease; false, nothing written, once it does not. */
export async function setWhileLeased(
  store: Store,
  name: SystemItem,
  holder: string,
  fields: Readonly<Record<string, unknown>>,
): Promise<boolean> {
  const names = Object.keys(fields);
  const written = await unlessConditionFails(
    store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.system(name),
        UpdateExpression: `SET ${names.map((_, index) => `#f${index} = :f${index}`).join(', ')}`,
        ConditionExpression: 'leaseHolder = :holder',
        ExpressionAttributeNames: Object.fromEntries(names.map((field, index) => [`#f${index}`, field])),
        ExpressionAttributeValues: {
          ':holder': holder,
          ...Object.fromEntries(names.map((field, index) => [`:f${index}`, fields[field]])),
        },
      }),
    ),
  );
  return written !== undefined;
}

/** Gives a singleton's lease back, if `holder` still holds it. */
export async function releaseSystemLease(store: Store, name: SystemItem, holder: string): Promise<void> {
  await unlessConditionFails(
    store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.system(name),
        UpdateExpression: 'REMOVE leaseHolder, leaseUntil',
        ConditionExpression: 'leaseHolder = :holder',
        ExpressionAttributeValues: { ':holder': holder },
      }),
    ),
  );
}
