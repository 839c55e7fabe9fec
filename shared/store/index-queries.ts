import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { OnTargetDelete } from '../entities/entity-definition.ts';
import type { Store } from './entity-store.ts';
import { documentOf, fitsKey, keys } from './keys.ts';

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
  direction: 'asc' | 'desc',
  offset: number,
  limit: number,
  pick: (item: Record<string, unknown>) => string,
): Promise<string[]> {
  const picked: string[] = [];
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
        Limit: skipping ? offset - skipped : limit - picked.length,
        ...(skipping ? { ProjectionExpression: 'PK, SK' } : {}),
        ExclusiveStartKey: start,
      }),
    );
    if (skipping) skipped += page.Count ?? 0;
    else for (const item of page.Items ?? []) picked.push(pick(item));
    start = page.LastEvaluatedKey;
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
  return field === 'id'
    ? pageOfPartition(store, keys.idOrder(collection, '').PK, direction, offset, limit, (item) => String(item.SK))
    : pageOfPartition(store, keys.unique(collection, field, '').PK, direction, offset, limit, (item) =>
        String(item.entityId),
      );
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
  const attributes = await pageOfPartition(store, partition, direction, offset, limit, (item) => String(item.SK));
  return { attributes, totalCount: await countItems(store, partition) };
}

/** Every role attribute a type's entities hold (for filtered role-attribute lists). */
export async function allRoleAttributes(store: Store, collection: string): Promise<string[]> {
  const attributes: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.roleCatalog(collection, '').PK },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) attributes.push(String(item.SK));
    start = page.LastEvaluatedKey;
  } while (start);
  return attributes;
}

/** How many items a partition holds (a keys-only count: one small response per megabyte of keys). */
async function countItems(store: Store, partition: string): Promise<number> {
  let total = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': partition },
        ConsistentRead: true,
        Select: 'COUNT',
        ExclusiveStartKey: start,
      }),
    );
    total += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return total;
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
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return Items.map((item) => {
    const [, referrer = '', referrerId = '', field = ''] = String(item.SK).split('#');
    const onTargetDelete: OnTargetDelete = item.onTargetDelete === 'cascade' ? 'cascade' : 'refuse';
    return { collection: referrer, id: referrerId, field, onTargetDelete };
  });
}

/**
 * Boundaries that split a type's id partition into segments read at once. Ids are ASCII (`newId`, and seeded names
 * such as `default`), so each segment is a key range starting at one of these characters; together they cover every
 * string, whatever the ids.
 */
const SEGMENT_STARTS = ['0', '5', 'A', 'H', 'O', 'V', 'c', 'j', 'q', 'x'] as const;

/** The key condition of segment `index`: `[start, next start)`, open-ended below the first and above the last. */
function segmentCondition(index: number): { expression: string; values: Record<string, string> } {
  const start = SEGMENT_STARTS[index]!;
  const next = SEGMENT_STARTS[index + 1];
  if (index === 0) return { expression: 'SK < :next', values: { ':next': next! } };
  if (next === undefined) return { expression: 'SK >= :start', values: { ':start': start } };
  // BETWEEN is inclusive: the upper end is the last string before `next` that an ASCII id can be.
  const before = `${String.fromCharCode(next.charCodeAt(0) - 1)}\uffff`;
  return { expression: 'SK BETWEEN :start AND :before', values: { ':start': start, ':before': before } };
}

/**
 * Every entity's filter record of a type (the filterable fields its id-order item carries), read as parallel key-range
 * queries of the id partition: small items, so a list whose filter pins nothing reads a fraction of the bytes of the
 * entities themselves; `fields` narrows each record to what the caller reads. Undefined when some item has no record
 * (written before records existed): read the entities.
 */
export async function filterRecords(
  store: Store,
  collection: string,
  fields?: ReadonlySet<string>,
): Promise<Record<string, unknown>[] | undefined> {
  // Only the fields the list reads: every attribute costs the SDK a conversion and the reply bytes, per record.
  const names = fields ? ['id', ...[...fields].filter((field) => field !== 'id')] : undefined;
  const projection = names
    ? {
        ProjectionExpression: names.map((_, index) => `#f${index}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(names.map((name, index) => [`#f${index}`, name])),
      }
    : {};
  const segments = await Promise.all(
    SEGMENT_STARTS.map(async (_, index) => {
      const { expression, values } = segmentCondition(index);
      const records: Record<string, unknown>[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await store.db.send(
          new QueryCommand({
            TableName: store.tableName,
            KeyConditionExpression: `PK = :pk AND ${expression}`,
            ExpressionAttributeValues: { ':pk': keys.idOrder(collection, '').PK, ...values },
            ConsistentRead: true,
            ExclusiveStartKey: start,
            ...projection,
          }),
        );
        for (const item of page.Items ?? []) records.push(documentOf(item));
        start = page.LastEvaluatedKey;
      } while (start);
      return records;
    }),
  );
  const records = segments.flat();
  return records.every((record) => typeof record.id === 'string') ? records : undefined;
}

/** Every item of a partition (optionally only sort keys beginning with `prefix`), all pages, strongly consistent. */
export async function partitionItems(
  store: Store,
  partition: string,
  options: { readonly prefix?: string; readonly projection?: string } = {},
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: options.prefix === undefined ? 'PK = :pk' : 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: {
          ':pk': partition,
          ...(options.prefix === undefined ? {} : { ':prefix': options.prefix }),
        },
        ...(options.projection ? { ProjectionExpression: options.projection } : {}),
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Every id of a type, in id order, from its id partition (keys only). */
export async function allIds(store: Store, collection: string): Promise<string[]> {
  const items = await partitionItems(store, keys.idOrder(collection, '').PK, { projection: 'SK' });
  return items.map((item) => String(item.SK));
}

/**
 * The selection items (see `Selections`) of the policies of `policyCollection` that name `role` on a field selecting
 * `collection`, documents of their evaluation records with `policyId`.
 */
export async function selectionsByRole(
  store: Store,
  collection: string,
  role: string,
  policyCollection: string,
): Promise<Record<string, unknown>[]> {
  if (!fitsKey(role)) return [];
  const { PK } = keys.selection(collection, role, policyCollection, '');
  const items = await partitionItems(store, PK, { prefix: `${policyCollection}#` });
  return items.map(documentOf);
}
