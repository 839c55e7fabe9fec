import { describe, expect, it } from 'vitest';
import { createDialCache } from '#ctrl-channel/dial-cache.ts';
import type { CtrlChange } from '#shared/store/ctrl-changes.ts';

const identity = { id: 'i1', attributes: ['b', 'a'] };
const service = { id: 's1', attributes: ['svc'] };
const change = (body: Record<string, unknown>) => ({ at: '2026-01-01T00:00:00Z', key: 'k', ...body }) as CtrlChange;

/** A lookup that counts its reads. */
function counted(routers: string[]) {
  const lookUp = async () => {
    lookUp.reads++;
    return routers;
  };
  lookUp.reads = 0;
  return lookUp;
}

describe('the dial cache', () => {
  it('answers a granted router from memory, keyed by ids and role attributes (order aside)', async () => {
    const cache = createDialCache(undefined);
    const lookUp = counted(['r1']);
    expect(await cache.mayUse(identity, service, 'r1', lookUp)).toBe(true);
    expect(await cache.mayUse({ id: 'i1', attributes: ['a', 'b'] }, service, 'r1', lookUp)).toBe(true);
    expect(lookUp.reads).toBe(1);
    expect(await cache.mayUse({ id: 'i1', attributes: ['a'] }, service, 'r1', lookUp)).toBe(true);
    expect(lookUp.reads).toBe(2);
  });

  it('reads afresh for a router the entry does not grant', async () => {
    const cache = createDialCache(undefined);
    const lookUp = counted(['r1']);
    await cache.mayUse(identity, service, 'r1', lookUp);
    expect(await cache.mayUse(identity, service, 'r2', lookUp)).toBe(false);
    expect(lookUp.reads).toBe(2);
  });

  it('drops every entry on reach, services and unknown notices, none on harmless ones', async () => {
    for (const kind of ['reach', 'services', 'something-new']) {
      const cache = createDialCache(undefined);
      await cache.mayUse(identity, service, 'r1', counted(['r1']));
      cache.apply([change({ kind: 'added', sessions: [] }), change({ kind: 'link' })]);
      expect(cache.size).toBe(1);
      cache.apply([change({ kind })]);
      expect(cache.size).toBe(0);
    }
  });

  it("drops an identity's entries when its sessions end or are removed", async () => {
    const cache = createDialCache(undefined);
    await cache.mayUse(identity, service, 'r1', counted(['r1']));
    await cache.mayUse({ id: 'i2', attributes: [] }, service, 'r1', counted(['r1']));
    cache.apply([change({ kind: 'ended', ended: { identityId: 'i1' } })]);
    expect(cache.size).toBe(1);
    cache.apply([change({ kind: 'removed', sessions: [{ id: 'a', identityId: 'i2', tokenHash: 'h' }] })]);
    expect(cache.size).toBe(0);
  });

  it('does not keep what a lookup read while a notice came', async () => {
    const cache = createDialCache(undefined);
    const granted = await cache.mayUse(identity, service, 'r1', async () => {
      cache.apply([change({ kind: 'reach' })]);
      return ['r1'];
    });
    expect(granted).toBe(true);
    expect(cache.size).toBe(0);
  });

  it('reads again past the maximum age, and keeps at most the maximum entries (least recently used out)', async () => {
    let now = 0;
    const cache = createDialCache(undefined, () => now, { maxAgeMs: 1_000, maxEntries: 2 });
    const lookUp = counted(['r1']);
    await cache.mayUse(identity, service, 'r1', lookUp);
    now = 1_001;
    await cache.mayUse(identity, service, 'r1', lookUp);
    expect(lookUp.reads).toBe(2);

    await cache.mayUse({ id: 'i2', attributes: [] }, service, 'r1', lookUp);
    await cache.mayUse(identity, service, 'r1', lookUp); // i1 used last: i2 goes first
    await cache.mayUse({ id: 'i3', attributes: [] }, service, 'r1', lookUp);
    expect(cache.size).toBe(2);
    const reads = lookUp.reads;
    await cache.mayUse(identity, service, 'r1', lookUp);
    expect(lookUp.reads).toBe(reads);
  });
});
