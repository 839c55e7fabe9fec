import { describe, expect, it } from 'vitest';
import { createRouterCostCache } from '#ctrl-channel/router-cost-cache.ts';
import { createTerminatorCache } from '#ctrl-channel/terminator-cache.ts';
import { routerCostNotices, terminatorNotices } from '#shared/entities/router-notice.ts';
import type { Terminator } from '#shared/entities/terminator.ts';
import type { CtrlChange } from '#shared/store/ctrl-changes.ts';

const change = (body: Record<string, unknown>) => ({ at: '2026-01-01T00:00:00Z', key: 'k', ...body }) as CtrlChange;
const terminator = (id: string, service = 's1') => ({ id, service }) as Terminator;

/** A read of a service's terminators that counts its calls. */
function counted(list: Terminator[]) {
  const read = async () => {
    read.reads++;
    return list;
  };
  read.reads = 0;
  return read;
}

/** What every notice kind this version writes looks like, the named ones naming `s1` or `r1`. */
const EVERY_KIND = [
  { kind: 'added', sessions: [] },
  { kind: 'updated', sessions: [] },
  { kind: 'removed', sessions: [] },
  { kind: 'ended', ended: { identityId: 'i1' } },
  { kind: 'reach' },
  { kind: 'certificates', identityId: 'i1' },
  { kind: 'router-ended', routerId: 'r1' },
  { kind: 'services' },
  { kind: 'terminators', serviceId: 's1' },
  { kind: 'router-cost', routerId: 'r1' },
  { kind: 'router-connected', routerId: 'r1' },
  { kind: 'router-disconnected', routerId: 'r1' },
  { kind: 'link', linkId: 'l1' },
];

describe('the terminator cache', () => {
  it("answers a service's terminators from memory once read, each service apart", async () => {
    const cache = createTerminatorCache(undefined);
    const read = counted([terminator('t1')]);
    expect(await cache.ofService('s1', read)).toEqual([terminator('t1')]);
    expect(await cache.ofService('s1', read)).toEqual([terminator('t1')]);
    expect(read.reads).toBe(1);
    await cache.ofService('s2', read);
    expect(read.reads).toBe(2);
  });

  it("drops a service's entry on its terminators notice only, everything on an unknown kind", async () => {
    const cache = createTerminatorCache(undefined);
    await cache.ofService('s1', counted([]));
    await cache.ofService('s2', counted([]));
    cache.apply(EVERY_KIND.filter(({ kind }) => kind !== 'terminators').map(change));
    expect(cache.size).toBe(2);
    cache.apply([change({ kind: 'terminators', serviceId: 's1' })]);
    expect(cache.size).toBe(1);
    const read = counted([terminator('t2')]);
    expect(await cache.ofService('s1', read)).toEqual([terminator('t2')]);
    expect(read.reads).toBe(1);
    cache.apply([change({ kind: 'something-new' })]);
    expect(cache.size).toBe(0);
  });

  it('reads afresh after a route attempt forgot the service', async () => {
    const cache = createTerminatorCache(undefined);
    const read = counted([terminator('t1')]);
    await cache.ofService('s1', read);
    cache.forget('s1');
    await cache.ofService('s1', read);
    expect(read.reads).toBe(2);
  });

  it("does not keep what a read found while the service's notice came, and keeps another service's", async () => {
    const cache = createTerminatorCache(undefined);
    const stale = await cache.ofService('s1', async () => {
      cache.apply([change({ kind: 'terminators', serviceId: 's1' })]);
      return [terminator('gone')];
    });
    expect(stale).toEqual([terminator('gone')]);
    expect(cache.size).toBe(0);
    await cache.ofService('s2', async () => {
      cache.apply([change({ kind: 'terminators', serviceId: 's1' })]);
      return [];
    });
    expect(cache.size).toBe(1);
  });

  it('does not keep a read that overlapped a drop of everything', async () => {
    const cache = createTerminatorCache(undefined);
    await cache.ofService('s1', async () => {
      cache.apply([change({ kind: 'something-new' })]);
      return [];
    });
    expect(cache.size).toBe(0);
  });

  it('reads again past the maximum age, and keeps at most the maximum entries (least recently used out)', async () => {
    let now = 0;
    const cache = createTerminatorCache(undefined, () => now, { maxAgeMs: 1_000, maxEntries: 2 });
    const read = counted([]);
    await cache.ofService('s1', read);
    now = 1_001;
    await cache.ofService('s1', read);
    expect(read.reads).toBe(2);

    await cache.ofService('s2', read);
    await cache.ofService('s1', read); // s1 used last: s2 goes first
    await cache.ofService('s3', read);
    expect(cache.size).toBe(2);
    const reads = read.reads;
    await cache.ofService('s1', read);
    expect(read.reads).toBe(reads);
    await cache.ofService('s2', read);
    expect(read.reads).toBe(reads + 1);
  });
});

describe('the router cost cache', () => {
  it('reads only the routers it does not keep, and leaves out a router the read does not find', async () => {
    const cache = createRouterCostCache(undefined);
    const asked: string[][] = [];
    const read = async (missing: string[]) => {
      asked.push(missing);
      return new Map(missing.filter((id) => id !== 'gone').map((id) => [id, { cost: 1, noTraversal: false }]));
    };
    expect([...(await cache.costsOf(['r1', 'gone'], read)).keys()]).toEqual(['r1']);
    expect([...(await cache.costsOf(['r1', 'r2'], read)).keys()].sort()).toEqual(['r1', 'r2']);
    expect(await cache.costsOf(['r1', 'r2'], read)).toEqual(
      new Map([
        ['r1', { cost: 1, noTraversal: false }],
        ['r2', { cost: 1, noTraversal: false }],
      ]),
    );
    expect(asked).toEqual([['r1', 'gone'], ['r2']]);
  });

  it("drops a router's cost on its router-cost notice only, everything on an unknown kind", async () => {
    const cache = createRouterCostCache(undefined);
    const read = async (missing: string[]) => new Map(missing.map((id) => [id, { cost: 1, noTraversal: false }]));
    await cache.costsOf(['r1', 'r2'], read);
    cache.apply(EVERY_KIND.filter(({ kind }) => kind !== 'router-cost').map(change));
    expect(cache.size).toBe(2);
    cache.apply([change({ kind: 'router-cost', routerId: 'r1' })]);
    expect(cache.size).toBe(1);
    cache.apply([change({ kind: 'something-new' })]);
    expect(cache.size).toBe(0);
  });

  it("does not keep a router's cost read while its notice came", async () => {
    const cache = createRouterCostCache(undefined);
    await cache.costsOf(['r1', 'r2'], async (missing) => {
      cache.apply([change({ kind: 'router-cost', routerId: 'r1' })]);
      return new Map(missing.map((id) => [id, { cost: 1, noTraversal: false }]));
    });
    expect(cache.size).toBe(1);
  });
});

describe("the notices of terminators' and routers' writes", () => {
  it('names the service of a terminator written, both when it moves to another', () => {
    expect(terminatorNotices(undefined, { service: 's1' })).toEqual([{ kind: 'terminators', serviceId: 's1' }]);
    expect(terminatorNotices({ service: 's1' }, undefined)).toEqual([{ kind: 'terminators', serviceId: 's1' }]);
    expect(terminatorNotices({ service: 's1' }, { service: 's2' })).toEqual([
      { kind: 'terminators', serviceId: 's1' },
      { kind: 'terminators', serviceId: 's2' },
    ]);
  });

  it('names a router whose cost or traversal flag changed, or which was deleted, and none for a create or another change', () => {
    const router = { id: 'r1', cost: 0, noTraversal: false };
    const notice = [{ kind: 'router-cost', routerId: 'r1' }];
    expect(routerCostNotices(router, { ...router, cost: 5 })).toEqual(notice);
    expect(routerCostNotices(router, { ...router, noTraversal: true })).toEqual(notice);
    expect(routerCostNotices(router, undefined)).toEqual(notice);
    expect(routerCostNotices(undefined, router)).toEqual([]);
    expect(routerCostNotices(router, { ...router })).toEqual([]);
  });
});
