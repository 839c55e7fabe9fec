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

describe("the dial cache's router grants", () => {
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
      cache.apply([
        change({ kind: 'added', sessions: [] }),
        change({ kind: 'link' }),
        change({ kind: 'terminators', serviceId: 's1' }),
        change({ kind: 'router-cost', routerId: 'r1' }),
      ]);
      expect(cache.size.grants).toBe(1);
      cache.apply([change({ kind })]);
      expect(cache.size.grants).toBe(0);
    }
  });

  it("drops an identity's entries when its sessions end or are removed", async () => {
    const cache = createDialCache(undefined);
    await cache.mayUse(identity, service, 'r1', counted(['r1']));
    await cache.mayUse({ id: 'i2', attributes: [] }, service, 'r1', counted(['r1']));
    cache.apply([change({ kind: 'ended', ended: { identityId: 'i1' } })]);
    expect(cache.size.grants).toBe(1);
    cache.apply([change({ kind: 'removed', sessions: [{ id: 'a', identityId: 'i2', tokenHash: 'h' }] })]);
    expect(cache.size.grants).toBe(0);
  });

  it('does not keep what a lookup read while a notice came', async () => {
    const cache = createDialCache(undefined);
    const granted = await cache.mayUse(identity, service, 'r1', async () => {
      cache.apply([change({ kind: 'reach' })]);
      return ['r1'];
    });
    expect(granted).toBe(true);
    expect(cache.size.grants).toBe(0);
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
    expect(cache.size.grants).toBe(2);
    const reads = lookUp.reads;
    await cache.mayUse(identity, service, 'r1', lookUp);
    expect(lookUp.reads).toBe(reads);
  });
});

/** A session check's facts as the check reads them, and a read that counts itself. */
const facts = (apiSessionId: string, identityId: string, sessionId: string) => ({
  apiSessionId,
  identityId,
  sessionId,
});
function countedRead(value: ReturnType<typeof facts>) {
  const read = async () => {
    read.reads++;
    return value;
  };
  read.reads = 0;
  return read;
}
const live = async <F>(kept: F) => kept;

describe("the dial cache's session facts", () => {
  it('answers the same tokens from memory while still live, and reads again once not', async () => {
    const cache = createDialCache(undefined);
    const read = countedRead(facts('a1', 'i1', 's1'));
    expect(await cache.sessionFacts(['api', 'dial'], read, live)).toEqual(facts('a1', 'i1', 's1'));
    expect(await cache.sessionFacts(['api', 'dial'], read, live)).toEqual(facts('a1', 'i1', 's1'));
    expect(read.reads).toBe(1);
    await cache.sessionFacts(['api', 'other-dial'], read, live);
    expect(read.reads).toBe(2);
    // Idle past the timeout: read again (the read refuses or finds it touched meanwhile).
    await cache.sessionFacts(['api', 'dial'], read, async () => undefined);
    expect(read.reads).toBe(3);
  });

  it('keeps what a use refreshed (the API session touched), not a read', async () => {
    const cache = createDialCache(undefined);
    const read = countedRead(facts('a1', 'i1', 's1'));
    await cache.sessionFacts(['api', 'dial'], read, live);
    const touched = { ...facts('a1', 'i1', 's1'), touchedAt: 'now' };
    expect(await cache.sessionFacts(['api', 'dial'], read, async () => touched)).toBe(touched);
    expect(await cache.sessionFacts(['api', 'dial'], read, live)).toBe(touched);
    expect(read.reads).toBe(1);
  });

  it('keeps no refusal', async () => {
    const cache = createDialCache(undefined);
    const refused = async () => {
      throw new Error('invalid session');
    };
    await expect(cache.sessionFacts(['api', 'dial'], refused, live)).rejects.toThrow('invalid session');
    expect(cache.size.facts).toBe(0);
  });

  it("drops by the notices naming their API session, identity or session; reach drops an identity's facts only when it names one", async () => {
    const cases: [Record<string, unknown>, number][] = [
      [{ kind: 'removed', sessions: [{ id: 'a1', identityId: 'i1', tokenHash: 'h' }] }, 1],
      [{ kind: 'updated', sessions: [{ id: 'a2', identityId: 'i2', tokenHash: 'h' }] }, 1],
      [{ kind: 'ended', ended: { identityId: 'i1' } }, 1],
      [{ kind: 'reach', identityId: 'i2' }, 1],
      [{ kind: 'reach' }, 2],
      [{ kind: 'session-removed', sessionId: 's2' }, 1],
      [{ kind: 'services' }, 0],
      [{ kind: 'something-new' }, 0],
      [{ kind: 'certificates', identityId: 'i1' }, 2],
      [{ kind: 'router-connected', routerId: 'r' }, 2],
      [{ kind: 'terminators', serviceId: 'svc' }, 2],
      [{ kind: 'router-cost', routerId: 'r' }, 2],
    ];
    for (const [body, left] of cases) {
      const cache = createDialCache(undefined);
      await cache.sessionFacts(['t1'], countedRead(facts('a1', 'i1', 's1')), live);
      await cache.sessionFacts(['t2'], countedRead(facts('a2', 'i2', 's2')), live);
      cache.apply([change(body)]);
      expect(cache.size.facts, JSON.stringify(body)).toBe(left);
    }
  });

  it('does not keep facts read while a notice came', async () => {
    const cache = createDialCache(undefined);
    await cache.sessionFacts(
      ['t1'],
      async () => {
        cache.apply([change({ kind: 'session-removed', sessionId: 'elsewhere' })]);
        return facts('a1', 'i1', 's1');
      },
      live,
    );
    expect(cache.size.facts).toBe(0);
  });
});
