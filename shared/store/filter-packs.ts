import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documentOf, keys } from './keys.ts';
import type { TableClient } from './table-client.ts';
import type { WriteOp } from './write-op.ts';

/**
 * Filter packs: every entity's filter record (`filterRecordOf`), kept a few dozen to a few hundred to an item, so a
 * list whose filter pins nothing reads a type's records as ~1,000 items instead of one item per entity (DynamoDB and
 * the SDK spend most of such a read per item, not per byte).
 *
 * - A type's records are spread over `PACK_BUCKETS` pack items `FILTERS#<collection>` / `<bucket>` by a hash of the
 *   id; each record is one attribute `r:<id>` holding its JSON, set or removed in the entity's own transaction (an
 *   attribute, not a map entry: DynamoDB cannot set an entry of a map that does not exist yet).
 * - A record over `MAX_PACKED_RECORD_BYTES` (large tags) is packed as `''` and read from the entity's id-order
 *   item, which carries every record too (`listEntitiesAmong` reads those by key).
 * - Writes that touch one pack in one transaction are merged into one update (`mergePackOps`), as DynamoDB allows an
 *   item once per transaction; concurrent writers of one pack conflict and are retried like any transaction conflict.
 * - Capacity: a pack stays under DynamoDB's 400 KB item limit up to ~1,000 records per bucket at the typical ~300
 *   bytes (about a million entities of one type), ~390 per bucket at the 1 KB worst case.
 */

export const PACK_BUCKETS = 1024;
export const MAX_PACKED_RECORD_BYTES = 1024;
const RECORD_PREFIX = 'r:';
/** Queries in flight over one type's packs: each reads a range of buckets. */
const PACK_SEGMENTS = 8;

/** The bucket of an id: FNV-1a, three hex digits. */
export function packBucket(id: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return (hash % PACK_BUCKETS).toString(16).padStart(3, '0');
}

/** The write that puts (or, with `record` undefined, removes) an entity's record in its pack; merged before sending. */
export function packOp(collection: string, id: string, record: Readonly<Record<string, unknown>> | undefined): WriteOp {
  let json: string | undefined;
  if (record) {
    json = JSON.stringify(record);
    if (Buffer.byteLength(json, 'utf8') > MAX_PACKED_RECORD_BYTES) json = '';
  }
  return {
    // Replaced by `mergePackOps`; a transaction never sends this placeholder.
    item: { ConditionCheck: { TableName: '', Key: {}, ConditionExpression: '' } },
    filterPack: { collection, bucket: packBucket(id), id, json },
  };
}

/** One update per pack of the transaction's pack writes (see `packOp`). */
export function mergePackOps(tableName: string, ops: readonly WriteOp[]): WriteOp[] {
  const packs = new Map<string, { collection: string; bucket: string; records: Map<string, string | undefined> }>();
  for (const { filterPack } of ops) {
    if (!filterPack) continue;
    const key = `${filterPack.collection}|${filterPack.bucket}`;
    const pack = packs.get(key) ?? { collection: filterPack.collection, bucket: filterPack.bucket, records: new Map() };
    pack.records.set(filterPack.id, filterPack.json);
    packs.set(key, pack);
  }
  return [...packs.values()].map(({ collection, bucket, records }) => {
    const names: Record<string, string> = {};
    const values: Record<string, string> = {};
    const sets: string[] = [];
    const removes: string[] = [];
    [...records].forEach(([id, json], i) => {
      names[`#r${i}`] = `${RECORD_PREFIX}${id}`;
      if (json === undefined) removes.push(`#r${i}`);
      else {
        values[`:r${i}`] = json;
        sets.push(`#r${i} = :r${i}`);
      }
    });
    const expression = [
      sets.length > 0 ? `SET ${sets.join(', ')}` : '',
      removes.length > 0 ? `REMOVE ${removes.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    return {
      item: {
        Update: {
          TableName: tableName,
          Key: keys.filterPack(collection, bucket),
          UpdateExpression: expression,
          ExpressionAttributeNames: names,
          ...(sets.length > 0 ? { ExpressionAttributeValues: values } : {}),
        },
      },
    };
  });
}

/** The key condition of pack segment `index` of `PACK_SEGMENTS`: a range of buckets. */
function segmentRange(index: number): { from: string; to: string } {
  const size = PACK_BUCKETS / PACK_SEGMENTS;
  const hex = (n: number) => n.toString(16).padStart(3, '0');
  return { from: hex(index * size), to: hex((index + 1) * size - 1) };
}

/**
 * Every filter record of a type from its packs, in no order: parallel range queries over the buckets, records over
 * the pack size read from their id-order items (by key, together).
 */
export async function packedFilterRecords(store: TableClient, collection: string): Promise<Record<string, unknown>[]> {
  const partition = keys.filterPack(collection, '').PK;
  const oversized: string[] = [];
  const segments = await Promise.all(
    Array.from({ length: PACK_SEGMENTS }, async (_, index) => {
      const { from, to } = segmentRange(index);
      const records: Record<string, unknown>[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await store.db.send(
          new QueryCommand({
            TableName: store.tableName,
            KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
            ExpressionAttributeValues: { ':pk': partition, ':from': from, ':to': to },
            ConsistentRead: true,
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) {
          for (const [name, value] of Object.entries(item)) {
            if (!name.startsWith(RECORD_PREFIX) || typeof value !== 'string') continue;
            if (value === '') oversized.push(name.slice(RECORD_PREFIX.length));
            else records.push(JSON.parse(value) as Record<string, unknown>);
          }
        }
        start = page.LastEvaluatedKey;
      } while (start);
      return records;
    }),
  );
  const records = segments.flat();
  if (oversized.length > 0) {
    const items = await store.batchGet(oversized.map((id) => keys.idOrder(collection, id)));
    records.push(...items.map(documentOf));
  }
  return records;
}
