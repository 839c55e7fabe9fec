import { describe, expect, it } from 'vitest';
import { RecentMap } from '#shared/recent-map.ts';

describe('a per-instance cache bounded by recency', () => {
  it('forgets the least recently set entry past its limit, and a set again counts as recent', () => {
    const map = new RecentMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3); // `a` is now the most recent: `b` goes first
    map.set('c', 4);

    expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([3, undefined, 4]);
    map.delete('a');
    expect(map.get('a')).toBeUndefined();
  });
});
