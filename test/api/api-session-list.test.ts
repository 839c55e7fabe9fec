import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { count } from '#shared/store/index-queries.ts';
import { keys } from '#shared/store/keys.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { dynamoDbTracker } from '../support/dynamodb-tracker.ts';
import { storeApiSessions } from '../support/stored-api-sessions.ts';

const TIMEOUT_MINUTES = 5;
const { controller, relogin, call, createdId } = useAdminController({ apiSessionTimeoutMinutes: TIMEOUT_MINUTES });

const createIdentity = (name: string): Promise<string> =>
  createdId('/identities', { name, type: 'User', isAdmin: false });

/** Stores sessions straight through the store (what a login writes), idle for `idleMinutes` already; their ids. */
const seedSessions = async (identityId: string, howMany: number, idleMinutes = 0): Promise<string[]> =>
  (await storeApiSessions(controller().deps, identityId, howMany, idleMinutes)).map((session) => session.id);

async function listAll(query = ''): Promise<{ ids: string[]; totalCount: number }> {
  const response = await call('GET', `/api-sessions?limit=500${query}`);
  expect(response.status).toBe(200);
  return {
    ids: response.body.data.map((session: { id: string }) => session.id),
    totalCount: response.body.meta.pagination.totalCount,
  };
}

/** The DynamoDB requests one call of the list page makes (its session check included). */
async function requestsOfPage(): Promise<{ requests: number; totalCount: number }> {
  let totalCount = 0;
  const { requests } = await dynamoDbTracker(controller().deps.store.db).measure(async () => {
    const response = await call('GET', '/api-sessions?limit=10');
    expect(response.status).toBe(200);
    totalCount = response.body.meta.pagination.totalCount;
  });
  return { requests, totalCount };
}

describe('GET /api-sessions pages', () => {
  it('in id order: pages join up into the whole list, each with the same total', async () => {
    const identityId = await createIdentity('pager');
    await seedSessions(identityId, 23);
    const all = await listAll();
    expect(all.ids).toEqual([...all.ids].sort());
    expect(all.totalCount).toBe(all.ids.length);

    const paged: string[] = [];
    for (let offset = 0; offset < all.ids.length + 7; offset += 7) {
      const page = await call('GET', `/api-sessions?limit=7&offset=${offset}`);
      expect(page.body.meta.pagination).toEqual({ limit: 7, offset, totalCount: all.totalCount });
      paged.push(...page.body.data.map((session: { id: string }) => session.id));
    }

    expect(paged).toEqual(all.ids);
  });

  it('in descending id order with sort=id desc', async () => {
    const all = await listAll();

    const descending = await listAll('&sort=id%20desc');
    const secondPage = await call('GET', '/api-sessions?limit=5&offset=5&sort=id%20desc');

    expect(descending.ids).toEqual([...all.ids].reverse());
    expect(secondPage.body.data.map((session: { id: string }) => session.id)).toEqual(
      [...all.ids].reverse().slice(5, 10),
    );
    expect(secondPage.body.meta.pagination.totalCount).toBe(all.totalCount);
  });

  it('leaves out expired sessions and drops them from the total (and from the stored count)', async () => {
    const identityId = await createIdentity('idler');
    const before = await listAll();
    const expired = await seedSessions(identityId, 12, TIMEOUT_MINUTES + 1);
    const live = await seedSessions(identityId, 3);

    const after = await listAll();
    const mine = await listAll(`&filter=${encodeURIComponent(`identityId = "${identityId}"`)}`);

    expect(after.totalCount).toBe(before.totalCount + live.length);
    expect(after.ids).toEqual(expect.arrayContaining(live));
    expect(after.ids.filter((id) => expired.includes(id))).toEqual([]);
    expect(mine.ids.sort()).toEqual([...live].sort());
    expect(mine.totalCount).toBe(live.length);
    // The list met the expired sessions and removed them, with their count.
    expect(await count(controller().deps.store, 'api-sessions')).toBe(after.totalCount);
  });

  it("fills its pages and counts its total right when DynamoDB's TTL deleted session items, and removes their pointers", async () => {
    const { store } = controller().deps;
    const identityId = await createIdentity('ttl-deleted');
    const seeded = await seedSessions(identityId, 6);
    const deleted = seeded.slice(0, 3);
    // As a TTL delete does: the session item alone, no counter moved, its id pointer left in the type index.
    for (const id of deleted) {
      const pointer = keys.apiSessionPointer(id);
      const { Item } = await store.db.send(new GetCommand({ TableName: store.tableName, Key: pointer }));
      await store.db.send(
        new DeleteCommand({ TableName: store.tableName, Key: keys.apiSession(String(Item?.tokenHash)) }),
      );
    }

    const all = await listAll();
    expect(all.ids.filter((id) => deleted.includes(id))).toEqual([]);
    expect(all.ids).toEqual(expect.arrayContaining(seeded.slice(3)));
    expect(all.totalCount).toBe(all.ids.length);
    expect(await count(store, 'api-sessions')).toBe(all.totalCount);
    for (const id of deleted) {
      const { Item } = await store.db.send(
        new GetCommand({ TableName: store.tableName, Key: keys.apiSessionPointer(id) }),
      );
      expect(Item).toBeUndefined();
    }
    // Pages of the rest join up into the whole list.
    const paged: string[] = [];
    for (let offset = 0; offset < all.ids.length; offset += 4) {
      const page = await call('GET', `/api-sessions?limit=4&offset=${offset}`);
      expect(page.body.meta.pagination.totalCount).toBe(all.totalCount);
      paged.push(...page.body.data.map((session: { id: string }) => session.id));
    }
    expect(paged).toEqual(all.ids);
  });

  it('drops sessions as they expire', async () => {
    const identityId = await createIdentity('fading');
    const before = await listAll();
    const sessions = await seedSessions(identityId, 4, TIMEOUT_MINUTES - 1);

    expect((await listAll()).totalCount).toBe(before.totalCount + sessions.length);
    controller().advanceClock(2 * 60_000);
    await relogin();
    const after = await listAll();

    expect(after.ids.filter((id) => sessions.includes(id))).toEqual([]);
    expect(after.totalCount).toBe(after.ids.length);
  });

  it('does not list sessions of a disabled identity, even more than its disable removed at once', async () => {
    const identityId = await createIdentity('many-revoked');
    const sessions = await seedSessions(identityId, 60);
    expect((await listAll()).ids).toEqual(expect.arrayContaining(sessions));

    const disabled = await call('POST', `/identities/${identityId}/disable`, { durationMinutes: 0 });
    await call('POST', `/identities/${identityId}/enable`);
    const after = await listAll();

    expect(disabled.status).toBe(200);
    expect(after.ids.filter((id) => sessions.includes(id))).toEqual([]);
    expect(after.totalCount).toBe(after.ids.length);
    const identity = await call('GET', `/identities/${identityId}`);
    expect(identity.body.data.hasApiSession).toBe(false);
    expect(identity.body.data).not.toHaveProperty('sessionsValidFrom');
  });
});

describe('the session count', () => {
  it('drops once for a session ended by several requests at the same time', async () => {
    const identityId = await createIdentity('raced');
    const [sessionId] = await seedSessions(identityId, 1);
    const before = await count(controller().deps.store, 'api-sessions');

    const responses = await Promise.all(Array.from({ length: 5 }, () => call('DELETE', `/api-sessions/${sessionId}`)));

    expect(responses.some((response) => response.status === 200)).toBe(true);
    expect(responses.every((response) => [200, 404].includes(response.status))).toBe(true);
    expect(await count(controller().deps.store, 'api-sessions')).toBe(before - 1);
  });
});

describe('GET /api-sessions cost', () => {
  it('makes as many DynamoDB requests per page with hundreds more sessions stored, live or expired', async () => {
    // Earlier tests leave expired and revoked sessions stored; a list removes a transaction's worth of each it meets
    // (and reads its page again when revoked ones left it short), so clear them all before measuring.
    for (let i = 0; i < 3; i++) await listAll();
    const baseline = await requestsOfPage();

    const identityId = await createIdentity('crowd');
    await seedSessions(identityId, 300);
    const withLive = await requestsOfPage();
    await seedSessions(identityId, 150, TIMEOUT_MINUTES + 1);
    const sweeping: number[] = [];
    for (let i = 0; i < 4; i++) sweeping.push((await requestsOfPage()).requests);
    const afterSweeping = await requestsOfPage();

    expect(withLive.requests).toBe(baseline.requests);
    expect(withLive.totalCount).toBe(baseline.totalCount + 300);
    // While expired sessions remain, a page also reads back and removes one transaction's worth of them (two
    // requests), and may read past those among the page's ids: each key read asks for at least as many as all before
    // it, so one or two more, as the random ids happen to interleave expired and live sessions.
    for (const sent of sweeping) expect(sent).toBeLessThanOrEqual(baseline.requests + 4);
    expect(afterSweeping).toEqual(withLive);
  });
});
