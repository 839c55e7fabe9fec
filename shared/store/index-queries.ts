import { paginateQuery, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { BaseDocument, EntityDefinition, OnTargetDelete } from '../entities/entity-definition.ts';
import { selectionRecordOf } from './derived-items.ts';
import type { Store } from './entity-store.ts';
import { recordOfItem } from './filter-records.ts';
import { fitsKey, keys } from './keys.ts';
import { type ReadKind, readOptions } from './read-consistency.ts';

export { filterRecords, filterRecordsOf } from './filter-records.ts';

/**
 * Reads of the store's index items (id order, unique markers as sorted partitions, role attributes, reference links,
 * counters): what lets lists and deletes avoid reading whole entity types.
 */

/** An entity that points at another through a link item (see `Reference`), and what the target's deletion does. */
export interface Referrer {
  readonly collection: string;
  readonly id: string;
  readonly field: string;
  readonly onTargetDelete: OnTargetDelete;
}

/**
 * One page of a partition's items in key order, skipping `offset` items first (keys only while skipping: small
 * reads, even for deep offsets); `pick` turns each item of the page into what the caller wants.
 */
async function pageOfPartition(
  store: Store,
  partition: string,
  read: ReadKind,
  page: { readonly direction: 'asc' | 'desc'; readonly offset: number; readonly limit: number },
  pick: (item: Record<string, unknown>) => string,
): Promise<string[]> {
  const { direction, offset, limit } = page;
  const picked: string[] = [];
  let skipped = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const skipping = skipped < offset;
    const result = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': partition },
        ScanIndexForward: direction === 'asc',
        ...readOptions(read),
        Limit: skipping ? offset - skipped : limit - picked.length,
        ...(skipping ? { ProjectionExpression: 'PK, SK' } : {}),
        ExclusiveStartKey: start,
      }),
    );
    if (skipping) skipped += result.Count ?? 0;
    else for (const item of result.Items ?? []) picked.push(pick(item));
    start = result.LastEvaluatedKey;
  } while (start && picked.length < limit);
  return picked;
}

/**
 * One page of a type's ids in the order of `id` or of a unique field every entity has, read from the id partition or
 * the field's markers (small items: skipping an offset reads thousands of keys per request, never entities).
 */
export function orderedIds(
  store: Store,
  collection: string,
  field: string,
  direction: 'asc' | 'desc',
  offset: number,
  limit: number,
): Promise<string[]> {
  const page = { direction, offset, limit };
  return field === 'id'
    ? pageOfPartition(store, keys.idOrder(collection, '').PK, 'listOrder', page, (item) => String(item.SK))
    : pageOfPartition(store, keys.unique(collection, field, '').PK, 'listOrder', page, (item) => String(item.entityId));
}

/**
 * The ids of a type's entities holding a role attribute, in id order (keys only), read for a policy's reach (an
 * access decision) or a list's role filter.
 */
export async function idsWithRole(
  store: Store,
  collection: string,
  attribute: string,
  read: 'policyReach' | 'roleFilter' | 'clientGrants' = 'policyReach',
): Promise<string[]> {
  if (!fitsKey(attribute)) return [];
  const items = await partitionItems(store, keys.roleMember(collection, attribute, '').PK, { read });
  return items.map((item) => String(item.SK));
}

/**
 * One page of the role attributes a type's entities hold, in order, with their total: the catalog partition holds
 * exactly the attributes in use (`role-catalog.ts`), one small item each.
 */
export async function roleAttributesPage(
  store: Store,
  collection: string,
  direction: 'asc' | 'desc',
  offset: number,
  limit: number,
): Promise<{ attributes: string[]; totalCount: number }> {
  const partition = keys.roleCatalog(collection, '').PK;
  const attributes = await pageOfPartition(store, partition, 'roleCatalog', { direction, offset, limit }, (item) =>
    String(item.SK),
  );
  return { attributes, totalCount: await countItems(store, partition, 'roleCatalog') };
}

/** Every role attribute a type's entities hold (for filtered role-attribute lists). */
export async function allRoleAttributes(store: Store, collection: string): Promise<string[]> {
  const items = await partitionItems(store, keys.roleCatalog(collection, '').PK, {
    projection: 'SK',
    read: 'roleCatalog',
  });
  return items.map((item) => String(item.SK));
}

/** How many items a partition holds (a keys-only count: one small response per megabyte of keys). */
async function countItems(store: Store, partition: string, read: ReadKind): Promise<number> {
  let total = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': partition },
        ...readOptions(read),
        Select: 'COUNT',
        ExclusiveStartKey: start,
      }),
    );
    total += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return total;
}

/** How many entities of a type exist, as a list's total: the sum of its counter shards (one query). */
export async function count(store: Store, collection: string): Promise<number> {
  const { Items = [] } = await store.db.send(
    new QueryCommand({
      TableName: store.tableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.counter(collection, 0).PK },
      ...readOptions('listCount'),
    }),
  );
  return Items.reduce((sum, item) => sum + Number(item.count ?? 0), 0);
}

/**
 * Up to `limit` entities linked to this one (strongly consistent: the links live in its partition). Links written
 * before links carried their rule were all refusing ones.
 */
export async function referencesTo(store: Store, collection: string, id: string, limit = 25): Promise<Referrer[]> {
  const { Items = [] } = await store.db.send(
    new QueryCommand({
      TableName: store.tableName,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.entity(collection, id).PK, ':prefix': 'REFBY#' },
      ...readOptions('references'),
      Limit: limit,
    }),
  );
  return Items.map((item) => {
    const [, referrer = '', referrerId = '', field = ''] = String(item.SK).split('#');
    const onTargetDelete: OnTargetDelete = item.onTargetDelete === 'cascade' ? 'cascade' : 'refuse';
    return { collection: referrer, id: referrerId, field, onTargetDelete };
  });
}

/** Every item a query of the table (or an index) matches, all pages, through the SDK's paginator. */
export async function queryAll(
  store: Store,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateQuery({ client: store.db }, { TableName: store.tableName, ...input })) {
    items.push(...(page.Items ?? []));
  }
  return items;
}

/**
 * Every item of a partition (optionally only sort keys beginning with `prefix`), all pages; `read` says what it is
 * read for, which decides its consistency (`READS`).
 */
export function partitionItems(
  store: Store,
  partition: string,
  options: { readonly read: ReadKind; readonly prefix?: string; readonly projection?: string },
): Promise<Record<string, unknown>[]> {
  return queryAll(store, {
    KeyConditionExpression: options.prefix === undefined ? 'PK = :pk' : 'PK = :pk AND begins_with(SK, :prefix)',
    ExpressionAttributeValues: {
      ':pk': partition,
      ...(options.prefix === undefined ? {} : { ':prefix': options.prefix }),
    },
    ...(options.projection ? { ProjectionExpression: options.projection } : {}),
    ...readOptions(options.read),
  });
}

/**
 * Every entity's id-order record of a type (its filter record and `idOrderFields`, see `idOrderItemOf`), in id order,
 * all pages, in one query: small items, so a type of a few hundred is a few read units in one request (a list's
 * `filterRecords` splits the partition into parallel ranges instead, for types of thousands).
 */
export async function idOrderRecords(
  store: Store,
  collection: string,
  read: ReadKind = 'policyReach',
): Promise<Record<string, unknown>[]> {
  return (await partitionItems(store, keys.idOrder(collection, '').PK, { read })).map(recordOfItem);
}

/** Every id of a type, in id order, from its id partition (keys only), for a policy's `#all` (an access decision). */
export async function allIds(store: Store, collection: string, read: ReadKind = 'policyReach'): Promise<string[]> {
  const items = await partitionItems(store, keys.idOrder(collection, '').PK, { projection: 'SK', read });
  return items.map((item) => String(item.SK));
}

/**
 * The selection items (see `Selections`) of the policies of a type that name `role` on a field selecting
 * `collection`: each policy's evaluation record (`selectionRecordOf`), with its `id` (from the sort key).
 */
export async function selectionsByRole(
  store: Store,
  collection: string,
  role: string,
  policy: { readonly collection: string; readonly recordFields: readonly string[] },
  read: ReadKind = 'policyReach',
): Promise<Record<string, unknown>[]> {
  if (!fitsKey(role)) return [];
  const prefix = `${policy.collection}#`;
  const { PK } = keys.selection(collection, role, policy.collection, '');
  const items = await partitionItems(store, PK, { prefix, read });
  return items.map((item) => ({
    ...selectionRecordOf(item, policy.recordFields),
    id: String(item.SK).slice(prefix.length),
  }));
}

/**
 * The ids of the entities of `referrers` that link to an entity (the configs of a config type, the services using a
 * config), from the link items the kit keeps in the target's partition: strongly consistent, and no entity is read.
 */
export async function referrerIds(
  store: Store,
  target: { readonly collection: string; readonly id: string },
  referrers: string,
): Promise<string[]> {
  const items = await queryAll(store, {
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
    ExpressionAttributeValues: {
      ':pk': keys.entity(target.collection, target.id).PK,
      ':prefix': `REFBY#${referrers}#`,
    },
    ProjectionExpression: 'SK',
    ...readOptions('referrers'),
  });
  // `REFBY#<collection>#<id>#<field>`
  const ids = new Set(items.map((item) => String(item.SK).split('#')[2] ?? ''));
  ids.delete('');
  return [...ids];
}

/**
 * The sort keys (after `prefix`) of one GSI2 partition's items that start with it, all pages, keys only: the ids an
 * identity's or an API session's index partition lists.
 */
export async function idsInIndexPartition(store: Store, partition: string, prefix: string): Promise<string[]> {
  const items = await queryAll(store, {
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :partition AND begins_with(GSI2SK, :prefix)',
    ExpressionAttributeValues: { ':partition': partition, ':prefix': prefix },
    ProjectionExpression: 'GSI2SK',
  });
  return items.map((item) => String(item.GSI2SK).slice(prefix.length));
}

/**
 * Every document of a type read whole (`readWhole`), from the type index (GSI1), in id order, all pages. Only those
 * types' documents enter it, so asking for another type is a mistake of the caller's, refused.
 */
export async function allOfType<D extends BaseDocument>(
  store: Store,
  def: EntityDefinition<D>,
): Promise<Record<string, unknown>[]> {
  if (!def.readWhole) throw new Error(`${def.collection} are not read whole: declare readWhole on their definition`);
  return queryAll(store, {
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :type',
    ExpressionAttributeValues: { ':type': keys.typeIndex(def.collection) },
  });
}

/** Every item of one GSI2 partition (an identity's posture data, an API session's children), all pages. */
export async function itemsInIndexPartition(store: Store, partition: string): Promise<Record<string, unknown>[]> {
  return queryAll(store, {
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :partition',
    ExpressionAttributeValues: { ':partition': partition },
  });
}
