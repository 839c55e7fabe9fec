import { describe, expect, it } from 'vitest';
import { onceUntilRejected } from '#shared/once-until-rejected.ts';

describe('onceUntilRejected (lazy AWS clients, lazily loaded operations, the server key secret)', () => {
  it('makes once and shares the answer with every call, concurrent or later', async () => {
    let made = 0;
    const get = onceUntilRejected(async () => ++made);
    expect(await Promise.all([get(), get(), get()])).toEqual([1, 1, 1]);
    expect(await get()).toBe(1);
    expect(made).toBe(1);
  });

  it('keeps no failure: the call after a rejection makes it again', async () => {
    let made = 0;
    const get = onceUntilRejected(async () => {
      made++;
      if (made === 1) throw new Error('a blip');
      return made;
    });
    await expect(get()).rejects.toThrow('a blip');
    expect(await get()).toBe(2);
    expect(await get()).toBe(2);
    expect(made).toBe(2);
  });
});
