/**
 * A map of at most `limit` entries that forgets the least recently set first: the per-instance caches a Lambda keeps
 * across requests (markers, identities seen, key sets, signed JWTs), bounded so a long-lived instance cannot grow
 * without end.
 */
export class RecentMap<K, V> {
  private readonly entries = new Map<K, V>();
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** Sets the entry as the most recent one, forgetting the oldest past the limit. */
  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }
}
