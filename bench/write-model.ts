import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import { TABLE_TARGET } from './capacity-tally.ts';
import { type ItemFacts, type ItemKey, keyText, partitionsOf } from './item-facts.ts';
import { itemSizeBytes, writeUnitsOf } from './item-size.ts';
import { attributeChanges, type UpdateRequest } from './update-expression.ts';

/**
 * The write units of each item a TransactWriteItems or BatchWriteItem writes, by AWS's rules, on the base table and
 * on each index, with the partition each lands on. DynamoDB Local's own figures for transactions are not AWS's (it
 * charges a ConditionCheck as a transactional read, doubles index writes, and adds up only the distinct per-item
 * figures: two 500-byte puts report 2 units, not 4), so the bench works them out:
 *
 * - a Put: a unit per KB of the larger of the new and the stored item; an Update: of the stored item before and after
 *   (the size after is read once the run is over); a Delete: of the stored item; a ConditionCheck: of the item
 *   checked. Inside a transaction each is doubled (prepare and commit), on the table side only.
 * - on each index: an item entering or leaving it is one write of its entry (the whole item for an all-attributes
 *   index, its keys for a keys-only one), a key moved within it two (delete and put), an all-attributes entry whose
 *   item changed otherwise one, a keys-only entry whose keys did not change none.
 */

/** One item's write on the table or one index. */
export interface ItemWrite {
  readonly target: string;
  /** The partition key it lands on; undefined: the item's partition there, read once the run is over. */
  readonly partition: string | undefined;
  /** The units, or how many given the item as stored once the run is over (undefined: not stored). */
  readonly units: number | ((stored: Readonly<Record<string, unknown>> | undefined) => number);
  readonly item: { readonly tableName: string; readonly key: ItemKey };
}

type Item = Readonly<Record<string, unknown>>;
const INDEXES = TABLE_KEYS.indexes;
/** A keys-only index entry: the table's and the index's keys, well under a KB. */
const KEYS_ONLY_ENTRY_UNITS = 1;

function entryUnits(projection: string, bytes: number): number {
  return projection === 'ALL' ? writeUnitsOf(bytes) : KEYS_ONLY_ENTRY_UNITS;
}

const sizeOf = (stored: Item | undefined) => (stored ? itemSizeBytes(stored) : 0);

function putWrites(tableName: string, item: Item, facts: ItemFacts, factor: number): ItemWrite[] {
  const key = { PK: item.PK, SK: item.SK };
  const before = facts.get(key);
  const bytes = Math.max(itemSizeBytes(item), before?.bytes ?? 0);
  const target = { tableName, key };
  const writes: ItemWrite[] = [
    { target: TABLE_TARGET, partition: String(item.PK), units: factor * writeUnitsOf(bytes), item: target },
  ];
  const after = partitionsOf(item);
  for (const index of INDEXES) {
    const old = before?.partitions[index.name];
    const now = after[index.name];
    const units = entryUnits(index.projection, bytes);
    if (now !== undefined && old !== undefined && now !== old) {
      writes.push({ target: index.name, partition: old, units, item: target });
      writes.push({ target: index.name, partition: now, units, item: target });
    } else if (now !== undefined && (old === undefined || index.projection === 'ALL')) {
      writes.push({ target: index.name, partition: now, units, item: target });
    } else if (now === undefined && old !== undefined) {
      writes.push({ target: index.name, partition: old, units, item: target });
    }
  }
  return writes;
}

function updateWrites(tableName: string, update: UpdateRequest & { Key: ItemKey }, facts: ItemFacts): ItemWrite[] {
  const key = update.Key;
  const target = { tableName, key };
  const before = facts.get(key);
  const bytesBefore = before?.bytes ?? 0;
  const { set, removed } = attributeChanges(update);
  const changed = set.size + removed.size > 0;
  const writes: ItemWrite[] = [
    {
      target: TABLE_TARGET,
      partition: String(key.PK),
      units: (stored) => 2 * writeUnitsOf(Math.max(bytesBefore, sizeOf(stored))),
      item: target,
    },
  ];
  for (const index of INDEXES) {
    const old = before?.partitions[index.name];
    const entry = (stored: Item | undefined) => entryUnits(index.projection, Math.max(bytesBefore, sizeOf(stored)));
    const setPartition = set.get(index.partitionKey);
    if (set.has(index.partitionKey) && setPartition !== undefined && String(setPartition) !== old) {
      writes.push({ target: index.name, partition: String(setPartition), units: entry, item: target });
      if (old !== undefined) writes.push({ target: index.name, partition: old, units: entry, item: target });
    } else if (removed.has(index.partitionKey)) {
      if (old !== undefined) writes.push({ target: index.name, partition: old, units: entry, item: target });
    } else if (old === undefined && before?.complete) {
      // Known not to be in the index, and the update does not put it there.
    } else if (set.has(index.sortKey) || removed.has(index.sortKey)) {
      writes.push({ target: index.name, partition: old, units: (stored) => 2 * entry(stored), item: target });
    } else if (changed && index.projection === 'ALL') {
      writes.push({ target: index.name, partition: old, units: entry, item: target });
    }
  }
  return writes;
}

function deleteWrites(tableName: string, key: ItemKey, facts: ItemFacts, factor: number): ItemWrite[] {
  const before = facts.get(key);
  const bytes = before?.bytes ?? 0;
  const target = { tableName, key };
  const writes: ItemWrite[] = [
    { target: TABLE_TARGET, partition: String(key.PK), units: factor * writeUnitsOf(bytes), item: target },
  ];
  for (const index of INDEXES) {
    const old = before?.partitions[index.name];
    if (old !== undefined) {
      writes.push({ target: index.name, partition: old, units: entryUnits(index.projection, bytes), item: target });
    }
  }
  return writes;
}

function conditionCheckWrites(tableName: string, key: ItemKey, facts: ItemFacts): ItemWrite[] {
  const bytes = facts.get(key)?.bytes;
  return [
    {
      target: TABLE_TARGET,
      partition: String(key.PK),
      units: bytes === undefined ? (stored) => 2 * writeUnitsOf(sizeOf(stored)) : 2 * writeUnitsOf(bytes),
      item: { tableName, key },
    },
  ];
}

interface TransactRequest {
  Put?: { TableName: string; Item: Item };
  Update?: UpdateRequest & { TableName: string; Key: ItemKey };
  Delete?: { TableName: string; Key: ItemKey };
  ConditionCheck?: { TableName: string; Key: ItemKey };
}

/** The writes of a TransactWriteItems that committed (`facts` as they were before it). */
export function transactWrites(input: Item, facts: ItemFacts): ItemWrite[] {
  return ((input.TransactItems ?? []) as TransactRequest[]).flatMap((request) => {
    if (request.Put) return putWrites(request.Put.TableName, request.Put.Item, facts, 2);
    if (request.Update) {
      // The index side of an update is not doubled: only the table's write is transactional.
      return updateWrites(request.Update.TableName, request.Update, facts);
    }
    if (request.Delete) return deleteWrites(request.Delete.TableName, request.Delete.Key, facts, 2);
    if (request.ConditionCheck)
      return conditionCheckWrites(request.ConditionCheck.TableName, request.ConditionCheck.Key, facts);
    return [];
  });
}

function requestKey(request: Item): string {
  const item = (request.PutRequest as { Item?: Item } | undefined)?.Item;
  const key = (request.DeleteRequest as { Key?: ItemKey } | undefined)?.Key;
  return item ? keyText({ PK: item.PK, SK: item.SK }) : key ? keyText(key) : '';
}

/** The writes of a BatchWriteItem's processed requests (`facts` as they were before it). */
export function batchWrites(input: Item, output: Item, facts: ItemFacts): ItemWrite[] {
  const unprocessed = (output.UnprocessedItems ?? {}) as Record<string, unknown[]>;
  return Object.entries((input.RequestItems ?? {}) as Record<string, Record<string, unknown>[]>).flatMap(
    ([tableName, requests]) => {
      // The unprocessed ones are sent again in a request of their own.
      const skipped = new Set((unprocessed[tableName] ?? []).map((request) => requestKey(request as Item)));
      return requests.flatMap((request) => {
        if (skipped.has(requestKey(request))) return [];
        const put = (request.PutRequest as { Item?: Item } | undefined)?.Item;
        const remove = (request.DeleteRequest as { Key?: ItemKey } | undefined)?.Key;
        if (put) return putWrites(tableName, put, facts, 1);
        if (remove) return deleteWrites(tableName, remove, facts, 1);
        return [];
      });
    },
  );
}

/** A conditional single-item write whose condition failed: a unit per KB of the larger of the stored and new item. */
export function failedWrite(operation: string, input: Item): ItemWrite {
  const tableName = String(input.TableName);
  const newItem = operation === 'PutItem' ? (input.Item as Item) : undefined;
  const key = (newItem ? { PK: newItem.PK, SK: newItem.SK } : input.Key) as ItemKey;
  const newBytes = newItem ? itemSizeBytes(newItem) : 0;
  return {
    target: TABLE_TARGET,
    partition: String(key.PK),
    units: (stored) => writeUnitsOf(Math.max(sizeOf(stored), newBytes)),
    item: { tableName, key },
  };
}
