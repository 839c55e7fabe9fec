import { type CtrlChange, isKnownChangeKind } from '#shared/store/ctrl-changes.ts';
import type { CtrlChangePoll } from './ctrl-change-poll.ts';

/**
 * Table reads an endpoint keeps in memory by key until a change log notice drops them (`terminator-cache.ts`,
 * `router-cost-cache.ts`): a kept answer is used for at most `maxAgeMs` (the safety net of a notice lost), the least
 * recently used go first past `maxEntries`, and an answer read while its key (or everything) was dropped is passed on
 * but not kept, since the read may have run before the write the drop stands for.
 */
export interface KeptReads<V> {
  /**
   * The values of `keys`: those kept and fresh from memory, the others from `load` (handed the missing keys only, and
   * not called when none is), which are kept. A key `load` does not answer is absent from the result and not kept.
   */
  getMany(
    keys: readonly string[],
    load: (missing: string[]) => Promise<ReadonlyMap<string, V>>,
  ): Promise<Map<string, V>>;
  /** Forgets a key's value; a read of it under way is not kept. */
  drop(key: string): void;
  /** Forgets everything; no read under way is kept. */
  dropAll(): void;
  /** How many values are kept (tests). */
  readonly size: number;
}

export interface KeptReadsOptions {
  readonly maxAgeMs: number;
  readonly maxEntries: number;
  readonly now: () => number;
}

/**
 * Entries in order of last use (a Map keeps insertion order: a hit is moved to the end), used for `maxAgeMs` at most
 * and `maxEntries` at most, the least recently used going first: what every memory of table reads here is kept in.
 */
export class AgedEntries<V> {
  private readonly entries = new Map<string, { readonly value: V; readonly storedAt: number }>();
  private readonly now: () => number;
  private readonly maxAgeMs: number;
  private readonly maxEntries: number;

  constructor(now: () => number, maxAgeMs: number, maxEntries: number) {
    this.now = now;
    this.maxAgeMs = maxAgeMs;
    this.maxEntries = maxEntries;
  }

  /** The entry when younger than the maximum age; a hit counts as a use. */
  get(key: string): V | undefined {
    const kept = this.entries.get(key);
    if (!kept) return undefined;
    this.entries.delete(key);
    if (this.now() - kept.storedAt > this.maxAgeMs) return undefined;
    this.entries.set(key, kept);
    return kept.value;
  }

  set(key: string, value: V, storedAt = this.now()): void {
    this.entries.delete(key);
    this.entries.set(key, { value, storedAt });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Replaces an entry's value, keeping its age (what a use learnt, not a fresh read). */
  update(key: string, value: V): void {
    const kept = this.entries.get(key);
    if (kept) this.entries.set(key, { value, storedAt: kept.storedAt });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  dropWhere(stale: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (stale(entry.value)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

export function createKeptReads<V>({ maxAgeMs, maxEntries, now }: KeptReadsOptions): KeptReads<V> {
  const kept = new AgedEntries<V>(now, maxAgeMs, maxEntries);
  /** Counts drops: a read keeps an answer only if nothing that concerns its key was dropped since it started. */
  let generation = 0;
  let allDroppedAt = 0;
  /** The generation of each key's last drop, while a read that started before it may still be under way. */
  const droppedAt = new Map<string, number>();
  let reading = 0;

  return {
    async getMany(keys, load) {
      const found = new Map<string, V>();
      const missing: string[] = [];
      for (const key of new Set(keys)) {
        const value = kept.get(key);
        if (value === undefined) missing.push(key);
        else found.set(key, value);
      }
      if (missing.length === 0) return found;
      const started = generation;
      const storedAt = now();
      reading++;
      try {
        const loaded = await load(missing);
        for (const key of missing) {
          if (!loaded.has(key)) continue;
          const value = loaded.get(key) as V;
          found.set(key, value);
          if (allDroppedAt > started || (droppedAt.get(key) ?? 0) > started) continue;
          kept.set(key, value, storedAt);
        }
        return found;
      } finally {
        // With no read under way, no drop can concern one: the drops' marks are no longer needed.
        if (--reading === 0) droppedAt.clear();
      }
    },
    drop(key) {
      generation++;
      kept.delete(key);
      if (reading === 0) return;
      droppedAt.set(key, generation);
      // Reads that overlap without end would let the marks grow: past the bound, a drop counts as one of everything.
      if (droppedAt.size > maxEntries) {
        allDroppedAt = generation;
        droppedAt.clear();
      }
    },
    dropAll() {
      generation++;
      allDroppedAt = generation;
      kept.clear();
    },
    get size() {
      return kept.size;
    },
  };
}

/**
 * Keeps `kept` current by the change log: each change `keyOf` names a key for drops that key; a kind this build does
 * not know (a newer build's, during a deploy) drops everything; the other known kinds drop nothing. Listens to the
 * poll when given one; the answer applies a page of changes (the caches expose it to their tests).
 */
export function dropOnChanges<V>(
  kept: KeptReads<V>,
  changes: Pick<CtrlChangePoll, 'listen'> | undefined,
  keyOf: (change: CtrlChange) => string | undefined,
): (page: readonly CtrlChange[]) => void {
  const apply = (page: readonly CtrlChange[]) => {
    for (const change of page) {
      const key = keyOf(change);
      if (key !== undefined) kept.drop(key);
      else if (!isKnownChangeKind(change.kind)) kept.dropAll();
    }
  };
  changes?.listen(async (page) => apply(page));
  return apply;
}
