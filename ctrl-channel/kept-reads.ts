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

interface Kept<V> {
  readonly value: V;
  readonly storedAt: number;
}

export function createKeptReads<V>({ maxAgeMs, maxEntries, now }: KeptReadsOptions): KeptReads<V> {
  /** In order of last use (a Map keeps insertion order: a hit is moved to the end). */
  const kept = new Map<string, Kept<V>>();
  /** Counts drops: a read keeps an answer only if nothing that concerns its key was dropped since it started. */
  let generation = 0;
  let allDroppedAt = 0;
  /** The generation of each key's last drop, while a read that started before it may still be under way. */
  const droppedAt = new Map<string, number>();
  let reading = 0;

  function fresh(key: string): V | undefined {
    const entry = kept.get(key);
    if (!entry) return undefined;
    kept.delete(key);
    if (now() - entry.storedAt > maxAgeMs) return undefined;
    kept.set(key, entry);
    return entry.value;
  }

  return {
    async getMany(keys, load) {
      const found = new Map<string, V>();
      const missing: string[] = [];
      for (const key of new Set(keys)) {
        const value = fresh(key);
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
          kept.delete(key);
          kept.set(key, { value, storedAt });
        }
        while (kept.size > maxEntries) kept.delete(kept.keys().next().value as string);
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
