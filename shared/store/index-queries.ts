import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mapBounded } from '../map-bounded.ts';
import type { Store } from './entity-store.ts';
import { fitsKey, keys } from './keys.ts';

/**
 * Reads of the store's index items (id order, unique markers as sorted partitions, role attributes, reference links,
 * counters): what lets lists and deletes avoid reading whole entity types.
 */

/** Something that still points at an entity, which therefore cannot be deleted. */
export interface Referrer {
  readonly collection: string;
  readonly id: string;
  readonly field: string;
}

/**
 * One page of a type's ids in the order of `id` or of a unique field every entity has, read from the id partition or
 * the field's markers (small items: skipping an offset reads thousands of keys per request, never entities).
 */
export async function orderedIds(
  store: Store,
  collection: string,
  field: string,
  direction: 'asc' | 'desc',
  offset: number,
  limit: number,
): Promise<string[]> {
  const partition = field === 'id' ? keys.idOrder(collection, '').PK : keys.unique(collection, field, '').PK;
  const ids: string[] = [];
  let skipped = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const skipping = skipped < offset;
    const page = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': partition },
        ScanIndexForward: direction === 'asc',
        ConsistentRead: true,
        Limit: skipping ? offset - skipped : limit - ids.length,
        ...(skipping ? { ProjectionExpression: 'PK, SK' } : {}),
        ExclusiveStartKey: start,
      }),
    );
    if (skipping) skipped += page.Count ?? 0;
    else for (const item of page.Items ?? []) ids.push(field === 'id' ? String(item.SK) : String(item.entityId));
    start = page.LastEvaluatedKey;
  } while (start && ids.length < limit);
  return ids;
}

/** The ids of a type's entities holding a role attribute, in id order (keys only). */
export async function idsWithRole(store: Store, collection: string, attribute: string): Promise<string[]> {
  if (!fitsKey(attribute)) return [];
  const ids: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.roleMember(collection, attribute, '').PK },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) ids.push(String(item.SK));
    start = page.LastEvaluatedKey;
  } while (start);
  return ids;
}

/** The role attributes of a type still held by at least one entity. */
export async function roleAttributesInUse(store: Store, collection: string): Promise<string[]> {
  const catalog: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.roleCatalog(collection, '').PK },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) catalog.push(String(item.SK));
    start = page.LastEvaluatedKey;
  } while (start);
  // The catalog only grows (entries are shared, so removing one safely would need a count every writer contends
  // on); an attribute is in use while its member partition has an item.
  const inUse = await mapBounded(catalog, 16, async (attribute) => {
    const { Count = 0 } = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.roleMember(collection, attribute, '').PK },
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    return Count > 0;
  });
  return catalog.filter((_, index) => inUse[index]);
}

/** How many entities of a type exist: the sum of its counter shards (one strongly consistent query). */
export async function count(store: Store, collection: string): Promise<number> {
  const { Items = [] } = await store.db.send(
    new QueryCommand({
      TableName: store.tableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.counter(collection, 0).PK },
      ConsistentRead: true,
    }),
  );
  return Items.reduce((sum, item) => sum + Number(item.count ?? 0), 0);
}

/** Up to `limit` entities whose tracked references point at this one (strongly consistent: same partition). */
export async function referencesTo(store: Store, collection: string, id: string, limit = 25): Promise<Referrer[]> {
  const { Items = [] } = await store.db.send(
    new QueryCommand({
      TableName: store.tableName,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.entity(collection, id).PK, ':prefix': 'REFBY#' },
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return Items.map((item) => {
    const [, referrer = '', referrerId = '', field = ''] = String(item.SK).split('#');
    return { collection: referrer, id: referrerId, field };
  });
}
