import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import { itemSizeBytes } from './item-size.ts';

/** An item's key as the document client takes it. */
export interface ItemKey {
  readonly PK: unknown;
  readonly SK: unknown;
}

/** What the bench has seen of one stored item: its billed size and the partition it has in each index, if any. */
export interface ItemFact {
  /** Unknown once an update the bench could not follow changed it. */
  readonly bytes: number | undefined;
  /** Index name → the item's partition key value there; undefined: not in that index (if `complete`). */
  readonly partitions: Readonly<Record<string, string | undefined>>;
  /** Whether `partitions` names every index the item is in (it was seen whole since its last unseen change). */
  readonly complete: boolean;
}

/** How many items the bench remembers (about 100 bytes each); the oldest are forgotten first. */
const CAPACITY = 200_000;

export function keyText(key: ItemKey): string {
  return `${String(key.PK)}\u0000${String(key.SK)}`;
}

/** The partition an item has in each index, from its index key attributes. */
export function partitionsOf(item: Readonly<Record<string, unknown>>): Record<string, string | undefined> {
  const partitions: Record<string, string | undefined> = {};
  for (const index of TABLE_KEYS.indexes) {
    const value = item[index.partitionKey];
    partitions[index.name] = value === undefined || value === null ? undefined : String(value);
  }
  return partitions;
}

/**
 * Sizes and index partitions of items the bench's requests wrote or read whole, so that units DynamoDB Local does not
 * report (condition checks, failed conditional writes) and the partitions of index writes can be worked out without
 * reading the item again.
 */
export class ItemFacts {
  private readonly facts = new Map<string, ItemFact>();

  get(key: ItemKey): ItemFact | undefined {
    return this.facts.get(keyText(key));
  }

  /** A whole item, as written or read. */
  learn(item: Readonly<Record<string, unknown>>): void {
    if (item.PK === undefined || item.SK === undefined) return;
    this.set(
      { PK: item.PK, SK: item.SK },
      { bytes: itemSizeBytes(item), partitions: partitionsOf(item), complete: true },
    );
  }

  /** An update the bench saw only as a request: its size is no longer known; index keys it set are. */
  changed(key: ItemKey, partitions: Readonly<Record<string, string | undefined>>): void {
    const before = this.get(key);
    this.set(key, {
      bytes: undefined,
      partitions: { ...before?.partitions, ...partitions },
      complete: before?.complete ?? false,
    });
  }

  forget(key: ItemKey): void {
    this.facts.delete(keyText(key));
  }

  private set(key: ItemKey, fact: ItemFact): void {
    const text = keyText(key);
    this.facts.delete(text);
    this.facts.set(text, fact);
    if (this.facts.size > CAPACITY) {
      const oldest = this.facts.keys().next().value;
      if (oldest !== undefined) this.facts.delete(oldest);
    }
  }
}
