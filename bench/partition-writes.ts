import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import { TABLE_TARGET } from './capacity-tally.ts';
import { type ItemFacts, type ItemKey, partitionsOf } from './item-facts.ts';
import { attributeChanges, type UpdateRequest } from './update-expression.ts';
import type { ItemWrite } from './write-model.ts';

/**
 * Which partitions a request's writes land on, in write units: the base table's partition key of each item written,
 * and, for each index entry written, that index's partition key. A single-item write's units per table and index are
 * the ones DynamoDB Local reported (they are AWS's); a batch's or transaction's are worked out per item
 * (`write-model.ts`). An index write's partition comes from the request when it sets the index key, else from the
 * item as the bench last saw it, else from reading the item once the run is over.
 */

/** Partition writes whose item was gone before the bench could look its index keys up. */
export const UNKNOWN_PARTITION = '?';

type Item = Record<string, unknown>;

/** Each index's partition key attribute. */
const TABLE_INDEX_KEYS: ReadonlyMap<string, string> = new Map(
  TABLE_KEYS.indexes.map((index) => [index.name, index.partitionKey]),
);

/** A single-item write (PutItem, UpdateItem, DeleteItem): Local's units per table and index, on the item's partitions. */
export function singleItemWrites(
  operation: string,
  input: Item,
  output: Item,
  facts: ItemFacts,
  unitsByTarget: ReadonlyMap<string, number>,
): ItemWrite[] {
  const tableName = String(input.TableName);
  const putItem = (operation === 'PutItem' ? input.Item : undefined) as Item | undefined;
  const key = (putItem ? { PK: putItem.PK, SK: putItem.SK } : input.Key) as ItemKey;
  const item = { tableName, key };
  const after = (output.Attributes as Item | undefined) ?? putItem;
  const set = operation === 'UpdateItem' ? attributeChanges(input as UpdateRequest).set : new Map<string, unknown>();
  const before = facts.get(key);
  const writes: ItemWrite[] = [];
  for (const [target, units] of unitsByTarget) {
    if (target === TABLE_TARGET) {
      writes.push({ target, partition: String(key.PK), units, item });
      continue;
    }
    const old = before?.partitions[target];
    const partitionKey = TABLE_INDEX_KEYS.get(target);
    const moved = partitionKey === undefined ? undefined : set.get(partitionKey);
    if (moved !== undefined && old !== undefined && String(moved) !== old) {
      // A key move between partitions: the old entry's removal and the new one's put.
      writes.push({ target, partition: old, units: units / 2, item });
      writes.push({ target, partition: String(moved), units: units / 2, item });
      continue;
    }
    const partition = moved !== undefined ? String(moved) : after ? partitionsOf(after)[target] : old;
    writes.push({ target, partition, units, item });
  }
  return writes;
}

/** Units per partition (`<table or index> <partition key>`), while the bench tracks them. */
export class PartitionTally {
  private readonly units = new Map<string, number>();

  add(write: { readonly target: string; readonly partition: string; readonly units: number }): void {
    const key = `${write.target}\u0000${write.partition}`;
    this.units.set(key, (this.units.get(key) ?? 0) + write.units);
  }

  snapshot(): ReadonlyMap<string, number> {
    return new Map(this.units);
  }
}

export interface PartitionShare {
  readonly target: string;
  readonly partition: string;
  readonly units: number;
  /** Of all write units on every partition (table and indexes together). */
  readonly share: number;
}

/** The partitions that took the most write units between two snapshots, busiest first. */
export function busiestPartitions(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
  count: number,
): { readonly total: number; readonly partitions: readonly PartitionShare[] } {
  const delta: { target: string; partition: string; units: number }[] = [];
  let total = 0;
  for (const [key, units] of after) {
    const added = units - (before.get(key) ?? 0);
    if (added <= 0) continue;
    const [target = '', partition = ''] = key.split('\u0000');
    delta.push({ target, partition, units: added });
    total += added;
  }
  delta.sort((a, b) => b.units - a.units);
  return {
    total,
    partitions: delta.slice(0, count).map((entry) => ({ ...entry, share: total > 0 ? entry.units / total : 0 })),
  };
}
