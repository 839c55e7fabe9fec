import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from './keys.ts';
import { readOptions } from './read-consistency.ts';
import type { TableClient } from './table-client.ts';

/**
 * The role-attribute catalog of a type (`ROLES#<collection>` / `<attribute>`): exactly the attributes some entity
 * holds, so the role-attribute lists read one small partition. Entries are written after the transaction that adds
 * a holder commits, and pruned after one that removes a holder, never inside: every writer of a popular attribute
 * would otherwise conflict on its entry.
 */

/** Whether some entity of the type holds the attribute (any member item; strongly consistent). */
export async function hasHolder(store: TableClient, collection: string, attribute: string): Promise<boolean> {
  const { Count = 0 } = await store.db.send(
    new QueryCommand({
      TableName: store.tableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.roleMember(collection, attribute, '').PK },
      ...readOptions('roleHolder'),
      Limit: 1,
    }),
  );
  return Count > 0;
}

export async function addToCatalog(store: TableClient, collection: string, attribute: string): Promise<void> {
  await store.db.send(new PutCommand({ TableName: store.tableName, Item: keys.roleCatalog(collection, attribute) }));
}

/**
 * Removes an attribute nobody holds any more. A holder added concurrently may commit between the check and the
 * delete; its own catalog put may land before the delete, so the holder check runs again after it and puts the entry
 * back. Whichever order the two writers run in, the entry exists exactly when a holder does.
 */
export async function pruneCatalog(store: TableClient, collection: string, attribute: string): Promise<void> {
  if (await hasHolder(store, collection, attribute)) return;
  await store.db.send(new DeleteCommand({ TableName: store.tableName, Key: keys.roleCatalog(collection, attribute) }));
  await restoreIfHeld(store, collection, attribute);
}

/** Puts back an entry just removed if a holder committed meanwhile (see `pruneCatalog`). */
export async function restoreIfHeld(store: TableClient, collection: string, attribute: string): Promise<void> {
  if (await hasHolder(store, collection, attribute)) await addToCatalog(store, collection, attribute);
}
