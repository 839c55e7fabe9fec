import { describe, expect, it } from 'vitest';
import { createKeptReads } from '#ctrl-channel/kept-reads.ts';

const options = { maxAgeMs: 1_000, maxEntries: 2, now: () => 0 };

/** A load that waits until released, answering each missing key with its own name. */
function held() {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const load = async (missing: string[]) => {
    await released;
    return new Map(missing.map((key) => [key, key]));
  };
  return { load, release: () => release() };
}

describe('reads kept until dropped', () => {
  it('keeps a read whose key was dropped only before it started, not one dropped while it ran', async () => {
    const kept = createKeptReads<string>(options);
    kept.drop('a');
    const first = held();
    const reading = kept.getMany(['a', 'b'], first.load);
    kept.drop('b');
    first.release();
    expect(await reading).toEqual(
      new Map([
        ['a', 'a'],
        ['b', 'b'],
      ]),
    );
    expect(kept.size).toBe(1);
    expect(await kept.getMany(['a'], async () => new Map([['a', 'read again']]))).toEqual(new Map([['a', 'a']]));
  });

  it('takes a drop while more keys were dropped during overlapping reads than it keeps for one of everything', async () => {
    const kept = createKeptReads<string>(options);
    const slow = held();
    const reading = kept.getMany(['x'], slow.load);
    for (const key of ['a', 'b', 'c']) kept.drop(key);
    slow.release();
    await reading;
    expect(kept.size).toBe(0);
    await kept.getMany(['x'], async () => new Map([['x', 'x']]));
    expect(kept.size).toBe(1);
  });
});
