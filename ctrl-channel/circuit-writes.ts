/**
 * A made circuit is answered before it is stored (mesh design step 8): the router and its SDK need only the answer,
 * and the item serves what comes after (its faults and confirmations, `route-path`, the fabric's list, links lost).
 * So that what comes after never reads the table before the item is there, each handler that reads or removes stored
 * circuits first waits for the writes of those it names (`settled`): a router's fault for a circuit answered a moment
 * ago then removes the stored item, not a missing one. A write that fails ends its circuit (`failed`): one the table
 * does not hold could not be ended by its faults.
 */
export interface CircuitWrites {
  /** Stores a circuit in the background; `failed` runs when the write fails. */
  record(circuitId: string, write: () => Promise<void>, failed: (error: unknown) => void): void;
  /** Resolves once the pending writes of these circuits, or of every circuit when none is named, are done. */
  settled(circuitIds?: readonly string[]): Promise<void>;
  /** How many writes are pending (tests, the endpoint's close). */
  readonly pending: number;
}

export function createCircuitWrites(): CircuitWrites {
  const pending = new Map<string, Promise<void>>();
  return {
    record(circuitId, write, failed) {
      const done = write()
        .catch((error: unknown) => failed(error))
        // Whatever `failed` does, a waiter is never failed by it.
        .catch(() => undefined)
        .finally(() => pending.delete(circuitId));
      pending.set(circuitId, done);
    },
    async settled(circuitIds) {
      const waits = circuitIds ? circuitIds.flatMap((id) => pending.get(id) ?? []) : [...pending.values()];
      if (waits.length > 0) await Promise.all(waits);
    },
    get pending() {
      return pending.size;
    },
  };
}
