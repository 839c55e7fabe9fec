import { describe, expect, it } from 'vitest';
import { createCircuitWrites } from '#ctrl-channel/circuit-writes.ts';

/** A write that finishes when told to. */
function heldWrite() {
  let finish!: (error?: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = (error) => (error ? reject(error) : resolve());
  });
  return { write: () => done, finish };
}

describe('circuits stored after their answer', () => {
  it('makes a reader of a circuit wait for its write, and only for its own', async () => {
    const writes = createCircuitWrites();
    const first = heldWrite();
    writes.record('c1', first.write, () => undefined);
    let settled = false;
    const waiting = writes.settled(['c1']).then(() => {
      settled = true;
    });
    await writes.settled(['c2']);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(settled).toBe(false);
    first.finish();
    await waiting;
    expect(settled).toBe(true);
    expect(writes.pending).toBe(0);
  });

  it('ends a circuit whose write fails, and lets its readers go on', async () => {
    const writes = createCircuitWrites();
    const failing = heldWrite();
    const failures: unknown[] = [];
    writes.record('c1', failing.write, (error) => failures.push(error));
    const all = writes.settled();
    failing.finish(new Error('throttled'));
    await all;
    expect(failures).toHaveLength(1);
    expect((failures[0] as Error).message).toBe('throttled');
    expect(writes.pending).toBe(0);
  });
});
