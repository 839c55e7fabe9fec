import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { documentOf, keys } from './keys.ts';
import { readOptions } from './read-consistency.ts';
import type { TableClient } from './table-client.ts';

/**
 * Filter records: what lists filter and sort on (`filterRecordOf`), one per entity, kept on the entity's id-order
 * item (`IDS#<collection>` / `<id>`) as one JSON attribute, `record`, written in the entity's own transaction.
 *
 * - A write costs the same whatever the size of its type: it puts its own small item, nothing shared grows with the
 *   type (filter packs, which held many records to an item, made every write rewrite a pack that grew with it).
 * - A list whose filter pins nothing reads its type's id partition, eventually consistent (`read-consistency.ts`):
 *   one query for a small type, and for a type past a thousand records the rest as up to 16 key-range queries (`SEGMENT_STARTS`)
 *   at once. One attribute per item, not one per field, because DynamoDB and
 *   the SDK spend most of such a read per attribute: parsing one string is several times cheaper than unmarshalling
 *   a dozen attributes.
 * - Items written before records were one attribute hold the record's fields as attributes of their own
 *   (`storedAttributes`); they read as before until the integrity fix rewrites them (`recordOfItem`).
 */

/** The attribute of an id-order item that holds its filter record as JSON. */
export const RECORD_ATTRIBUTE = 'record';

/**
 * Where the id partition is split for parallel reads: ids are ASCII (`newId`'s alphabet, or fixed names), so these
 * starts spread them evenly (four first characters each); any string falls in exactly one segment (`segmentsAfter`).
 */
const SEGMENT_STARTS = ['', '2', '6', 'A', 'E', 'I', 'M', 'Q', 'U', 'Y', 'c', 'g', 'k', 'o', 's', 'w'] as const;

/** The id-order item of an entity carrying its record. */
export function recordItem(collection: string, record: Readonly<Record<string, unknown>> & { readonly id: string }) {
  return { ...keys.idOrder(collection, record.id), [RECORD_ATTRIBUTE]: JSON.stringify(record) };
}

/** The filter record an id-order item carries, in either form (see above); its id is always the item's sort key. */
export function recordOfItem(item: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const json = item[RECORD_ATTRIBUTE];
  const record = typeof json === 'string' ? (JSON.parse(json) as Record<string, unknown>) : documentOf(item);
  return { ...record, id: String(item.SK) };
}

/** A key range of the id partition: from `from` (past it when `fromExcluded`), below `below`; unbounded when unset. */
interface KeyRange {
  readonly from?: string;
  readonly fromExcluded?: boolean;
  readonly below?: string;
}

/**
 * The key condition of a range, with the sort keys to drop from its answer: DynamoDB's one condition on a sort key is
 * inclusive at both ends (`BETWEEN`), so the ends a range leaves out are dropped after the read.
 */
function rangeQuery(partition: string, range: KeyRange) {
  const { from, below } = range;
  const dropped = new Set<string>();
  if (range.fromExcluded && from !== undefined) dropped.add(from);
  if (from !== undefined && below !== undefined) {
    dropped.add(below);
    return {
      condition: 'PK = :pk AND SK BETWEEN :from AND :below',
      values: { ':pk': partition, ':from': from, ':below': below },
      dropped,
    };
  }
  if (below !== undefined)
    return { condition: 'PK = :pk AND SK < :below', values: { ':pk': partition, ':below': below }, dropped };
  if (from !== undefined) {
    const operator = range.fromExcluded ? '>' : '>=';
    return { condition: `PK = :pk AND SK ${operator} :from`, values: { ':pk': partition, ':from': from }, dropped };
  }
  return { condition: 'PK = :pk', values: { ':pk': partition }, dropped };
}

/** The segments of the id partition past `after`, each to be read in parallel; none is empty by its bounds. */
function segmentsAfter(after: string): KeyRange[] {
  return SEGMENT_STARTS.flatMap((start, index): KeyRange[] => {
    const below = SEGMENT_STARTS[index + 1];
    if (below !== undefined && below <= after) return [];
    if (after >= start) return [{ from: after, fromExcluded: true, ...(below !== undefined ? { below } : {}) }];
    return [{ from: start, ...(below !== undefined ? { below } : {}) }];
  });
}

/** Needles sent with a read at most. */
const MAX_NEEDLES = 8;

/**
 * The filter expression that keeps only the items whose record's JSON holds every needle, as JSON writes it (each
 * character escaped on its own, so a value holding the needle holds its escaped text), and the items of the earlier
 * layout, which have no `record` and are left to the caller's filter. DynamoDB bills the items it read either way;
 * what it leaves out is never sent, unmarshalled or parsed.
 */
function recordsHolding(needles: readonly string[]) {
  if (needles.length === 0) return undefined;
  // The longest say the most and keep the expression well inside DynamoDB's 4 KB; the filter checks every one.
  const sent = [...needles].sort((a, b) => b.length - a.length).slice(0, MAX_NEEDLES);
  const values = Object.fromEntries(sent.map((needle, i) => [`:needle${i}`, JSON.stringify(needle).slice(1, -1)]));
  const holds = Object.keys(values).map((name) => `contains(#record, ${name})`);
  return {
    FilterExpression: `attribute_not_exists(#record) OR (${holds.join(' AND ')})`,
    ExpressionAttributeNames: { '#record': RECORD_ATTRIBUTE },
    values,
  };
}

/**
 * The records the first query of a type reads at most (a few hundred KB): a type within it is read in one request; a
 * larger one goes on in parallel ranges after it. Counted before the needles' filter, like DynamoDB's own limits, so
 * a filter that sends back few records does not make the first query read a large type alone.
 */
const FIRST_QUERY_ITEMS = 1_000;

/**
 * The items of one key range, but those `holding` leaves out: all pages, or (`firstPageOnly`) the first page (at most
 * `FIRST_QUERY_ITEMS` read) and the key it stopped at.
 */
async function rangeItems(
  store: TableClient,
  partition: string,
  range: KeyRange,
  holding: ReturnType<typeof recordsHolding>,
  firstPageOnly = false,
) {
  const { condition, values, dropped } = rangeQuery(partition, range);
  const items: Record<string, unknown>[] = [];
  let start: QueryCommandInput['ExclusiveStartKey'];
  do {
    const page = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: condition,
        ExpressionAttributeValues: { ...values, ...holding?.values },
        ...(holding
          ? { FilterExpression: holding.FilterExpression, ExpressionAttributeNames: holding.ExpressionAttributeNames }
          : {}),
        ...readOptions('filterRecords'),
        ...(firstPageOnly ? { Limit: FIRST_QUERY_ITEMS } : {}),
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) if (!dropped.has(String(item.SK))) items.push(item);
    start = page.LastEvaluatedKey;
  } while (start && !firstPageOnly);
  return { items, stoppedAt: start ? String(start.SK) : undefined };
}

/**
 * Every entity's filter record of a type, in no particular order: the id partition's segments read at once. With
 * `needles` (`requiredSubstrings` of the list's filter), only the records holding them all in some field, and any
 * record of the earlier layout: a superset of what the filter matches, which the caller's filter then decides.
 */
export async function filterRecords(
  store: TableClient,
  collection: string,
  needles: readonly string[] = [],
): Promise<Record<string, unknown>[]> {
  const partition = keys.idOrder(collection, '').PK;
  const holding = recordsHolding(needles);
  // One query reads a small type whole (a request, half a read unit); a larger one goes on from where it stopped in
  // the segments after it, in parallel.
  const first = await rangeItems(store, partition, {}, holding, true);
  if (first.stoppedAt === undefined) return first.items.map(recordOfItem);
  const rest = await Promise.all(
    segmentsAfter(first.stoppedAt).map(async (range) => (await rangeItems(store, partition, range, holding)).items),
  );
  return [...first.items, ...rest.flat()].map(recordOfItem);
}

/** The filter records of some entities of a type, by key (ids without an entity are left out). */
export async function filterRecordsOf(
  store: TableClient,
  collection: string,
  ids: Iterable<string>,
): Promise<Record<string, unknown>[]> {
  const items = await store.batchGet(
    [...ids].map((id) => keys.idOrder(collection, id)),
    undefined,
    'filterRecords',
  );
  return items.map(recordOfItem);
}
