import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { keys } from '#shared/store/keys.ts';
import { itemSizeBytes } from '../../bench/item-size.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { dynamoDbReadUnits } from '../support/dynamodb-read-units.ts';
import { recordSent } from '../support/dynamodb-recorder.ts';
import { dynamoDbTracker } from '../support/dynamodb-tracker.ts';
import { integrityRun } from '../support/integrity.ts';

/**
 * What the client's two busiest reads cost in DynamoDB, asserted exactly so that a change that adds a round trip or a
 * request per policy fails here: the service list and a fresh Dial or Bind session, for a caller one policy of each
 * kind selects and for one that thirty Dial and thirty Bind policies, ten edge router policies and ten service edge
 * router policies select. Waves and requests are the same for both; so are the keys read one by one (each a read unit
 * however small), while the read units differ only by the policies' own index entries (items of about a hundred
 * bytes, read together).
 */
const C = '/edge/client/v1';
const { controller, call, createdId, userUnder } = useAdminController();

const POLICIES = 30;
const ROUTER_POLICIES = 10;

interface Network {
  readonly token: string;
  readonly serviceId: string;
}

/** An edge router policy for an identity role and a service edge router policy for a service role, over one router role. */
async function routerPolicyPair(name: string, identityRole: string, serviceRole: string, edgeRouterRole: string) {
  await createdId('/edge-router-policies', {
    name: `${name}-erp`,
    semantic: 'AnyOf',
    identityRoles: [identityRole],
    edgeRouterRoles: [edgeRouterRole],
  });
  await createdId('/service-edge-router-policies', {
    name: `${name}-serp`,
    semantic: 'AnyOf',
    serviceRoles: [serviceRole],
    edgeRouterRoles: [edgeRouterRole],
  });
}

/**
 * A caller with its own attribute, a service, and `count` Dial and as many Bind policies granting it (half by the
 * service's attribute, half by its `@id`), `routerPolicies` edge router policies and as many service edge router
 * policies over the shared routers. A second service keeps each run's session fresh.
 */
async function network(label: string, count: number, routerPolicies: number): Promise<Network & { other: string }> {
  const user = await userUnder('default', `rc-${label}`);
  await call('PATCH', `/identities/${user.identityId}`, { roleAttributes: [`rc-${label}`] });
  const serviceId = await createdId('/services', { name: `rc-${label}`, roleAttributes: [`rc-${label}-svc`] });
  const other = await createdId('/services', { name: `rc-${label}-other`, roleAttributes: [`rc-${label}-svc`] });
  for (let i = 0; i < count; i++) {
    for (const type of ['Dial', 'Bind']) {
      await createdId('/service-policies', {
        name: `rc-${label}-${type}-${i}`,
        type,
        semantic: i % 2 === 0 ? 'AnyOf' : 'AllOf',
        identityRoles: [`#rc-${label}`],
        serviceRoles: i % 2 === 0 ? [`#rc-${label}-svc`] : [`@${serviceId}`, `@${other}`],
        postureCheckRoles: [],
      });
    }
  }
  for (let i = 0; i < routerPolicies; i++) {
    const routerRole = i === 0 ? '#rc-edge' : `#rc-edge-${i}`;
    await routerPolicyPair(`rc-${label}-${i}`, `#rc-${label}`, `#rc-${label}-svc`, routerRole);
  }
  const login = await controller().call('POST', `${C}/authenticate?method=password`, {
    body: { username: user.username, password: user.password },
  });
  expect(login.status, login.text).toBe(200);
  return { token: login.body.data.token as string, serviceId, other };
}

/** Waves, requests, read units and keys read one by one of one request. */
async function costOf(send: () => Promise<{ status: number; text: string }>, status: number) {
  const units = dynamoDbReadUnits(controller().deps.store.db);
  let answered: { status: number; text: string } | undefined;
  let reads = { readUnits: 0, keysRead: 0 };
  const roundTrips = await dynamoDbTracker(controller().deps.store.db).measure(async () => {
    reads = await units.measure(async () => {
      answered = await send();
    });
  });
  expect(answered?.status, answered?.text).toBe(status);
  return { ...roundTrips, ...reads };
}

/** The services a caller lists, each with its permissions, by name. */
async function permissionsListed(token: string): Promise<(string | string[])[][]> {
  const listed = await controller().call('GET', `${C}/services`, { token });
  expect(listed.status, listed.text).toBe(200);
  return (listed.body.data as { name: string; permissions: string[] }[])
    .map((service) => [service.name, service.permissions])
    .sort();
}

/** What an integrity fix reports: it must name an out-of-date policy selection. */
async function expectSelectionFixed(): Promise<void> {
  const found = (await integrityRun(controller().deps, 'fix')).map((finding) => finding.description);
  expect(found).toContainEqual(expect.stringMatching(/policy selection .* is out of date/));
}

describe('what the client service list and a fresh session cost', () => {
  let one: Awaited<ReturnType<typeof network>>;
  let many: Awaited<ReturnType<typeof network>>;

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      await createdId('/edge-routers', { name: `rc-router-${i}`, roleAttributes: ['rc-edge'], appData: { zone: i } });
    }
    one = await network('one', 1, 1);
    many = await network('many', POLICIES, ROUTER_POLICIES);
  }, 120_000);

  const list = (token: string) => () => controller().call('GET', `${C}/services`, { token });
  const session = (token: string, serviceId: string, type: 'Dial' | 'Bind') => () =>
    controller().call('POST', `${C}/sessions`, { token, body: { serviceId, type } });

  it('lists services in 4 waves and 9 requests, the same for 1 or 30 policies of each type', async () => {
    // Each caller lists once first, so no measurement includes anything a first call sets up.
    for (const caller of [one, many]) await list(caller.token)();
    const ofOne = await costOf(list(one.token), 200);
    const ofMany = await costOf(list(many.token), 200);
    // One to resolve the caller (its API session and its identity, one batch); then its policies with its overrides, posture
    // count and posture data (6 requests); the services their roles select (one role partition; `@ids` are not
    // read); the page.
    expect({ waves: ofOne.waves, requests: ofOne.requests }).toEqual({ waves: 4, requests: 9 });
    expect({ waves: ofMany.waves, requests: ofMany.requests }).toEqual({ waves: 4, requests: 9 });
    // Read one by one: the API session, the identity (which names the live authenticator that opened the session: it
    // is not read), the posture data, the page's two services.
    expect(ofOne.keysRead).toBe(5);
    expect(ofMany.keysRead).toBe(5);
    // 58 more policy entries, under a hundred bytes each, read together eventually consistently: 5 KB, half a unit.
    expect(ofMany.readUnits - ofOne.readUnits).toBeLessThanOrEqual(0.5);
    const listed = await list(many.token)();
    expect((listed.body.data as { id: string; permissions: string[] }[]).map((s) => s.permissions)).toEqual([
      ['Bind', 'Dial'],
      ['Bind', 'Dial'],
    ]);
  });

  for (const type of ['Dial', 'Bind'] as const) {
    it(`creates a fresh ${type} session in 4 waves and 16 requests, the same for 1 or 30 policies of each type`, async () => {
      const first = type === 'Dial' ? 'serviceId' : 'other';
      const ofOne = await costOf(session(one.token, one[first], type), 201);
      const ofMany = await costOf(session(many.token, many[first], type), 201);
      // One for the caller (a batch); then the service, the existing session, the caller's service and edge router policies
      // (3 requests each), every router's id-order record and the posture data (10 requests); the service's service
      // edge router policies (3); the write, and beside it the usable routers' connection items (one batch: whether
      // each is online, and its urls). The routers' fields come from their records: no read of their own.
      expect({ waves: ofOne.waves, requests: ofOne.requests }).toEqual({ waves: 4, requests: 16 });
      expect({ waves: ofMany.waves, requests: ofMany.requests }).toEqual({ waves: 4, requests: 16 });
      // The API session, the identity (its authenticator is named on it, not read), the service, the existing session,
      // the posture data; the 3 routers' connection items.
      expect(ofOne.keysRead).toBe(8);
      expect(ofMany.keysRead).toBe(8);
      // 58 more service policy entries, 9 more edge router and 9 service edge router policy entries: 7 KB.
      expect(ofMany.readUnits - ofOne.readUnits).toBeLessThanOrEqual(1);
    });
  }

  it("writes the API session's flag with its first session only", async () => {
    const caller = await network('flagged', 1, 1);
    const { db } = controller().deps.store;
    const writtenKeys = async (run: () => Promise<unknown>) =>
      (await recordSent(db, run))
        .filter(({ command }) => command === 'TransactWriteItemsCommand')
        .flatMap(
          ({ input }) => input.TransactItems as Record<string, { Key?: { PK: string }; Item?: { PK: string } }>[],
        )
        .map((item) => String(Object.values(item)[0]?.Key?.PK ?? Object.values(item)[0]?.Item?.PK));
    const first = await writtenKeys(() => session(caller.token, caller.serviceId, 'Dial')());
    const second = await writtenKeys(() => session(caller.token, caller.other, 'Dial')());
    expect(first.filter((pk) => pk.startsWith('APISESSION#'))).toHaveLength(1);
    expect(second.filter((pk) => pk.startsWith('APISESSION#'))).toEqual([]);
    expect(second.filter((pk) => pk.startsWith('sessions#'))).toHaveLength(1);
  });

  it('stores no router in a session: its item weighs the same for 3 or 43 usable routers, and its routers follow the policies', async () => {
    const { db, tableName: TableName } = controller().deps.store;
    const sessionBytes = async (id: string) => {
      const { Item } = await db.send(
        new GetCommand({ TableName, Key: keys.entity('sessions', id), ConsistentRead: true }),
      );
      return itemSizeBytes(Item ?? {});
    };
    const routersOf = (body: { data: { edgeRouters: { name: string }[] } }) =>
      body.data.edgeRouters.map((router) => router.name).sort();
    const few = await network('weigh-few', 1, 1);
    const fewSession = await session(few.token, few.serviceId, 'Dial')();
    expect(routersOf(fewSession.body)).toHaveLength(3);

    const many = await network('weigh-many', 1, 1);
    for (let i = 0; i < 40; i++) {
      const name = `rc-weigh-${String(i).padStart(2, '0')}-${'r'.repeat(40)}`;
      await createdId('/edge-routers', { name, roleAttributes: ['rc-weigh-edge'] });
    }
    await routerPolicyPair('rc-weigh-many', '#rc-weigh-many', '#rc-weigh-many-svc', '#rc-weigh-edge');
    const manySession = await session(many.token, many.serviceId, 'Dial')();
    expect(routersOf(manySession.body)).toHaveLength(43);
    // The same fields, ids of the same length: within a few bytes, not the 43 routers' ids.
    const [fewBytes, manyBytes] = [
      await sessionBytes(fewSession.body.data.id),
      await sessionBytes(manySession.body.data.id),
    ];
    expect(Math.abs(manyBytes - fewBytes)).toBeLessThan(16);

    // The routers a session shows are those its identity and service may use now (the reference works them out on
    // every read): a new edge router policy adds one, on both APIs.
    const extra = await createdId('/edge-routers', { name: 'rc-weigh-extra', roleAttributes: ['rc-weigh-extra'] });
    await routerPolicyPair('rc-weigh-extra', '#rc-weigh-few', '#rc-weigh-few-svc', `@${extra}`);
    const id = fewSession.body.data.id as string;
    const detail = await controller().call('GET', `${C}/sessions/${id}`, { token: few.token });
    expect(routersOf(detail.body)).toEqual([...routersOf(fewSession.body), 'rc-weigh-extra'].sort());
    const managed = await call('GET', `/sessions/${id}`);
    expect(routersOf(managed.body)).toEqual(routersOf(detail.body));
  });

  it("shows each router's appData from its record, and reads a router whole whose record predates appData", async () => {
    const fresh = await network('legacy', 1, 1);
    const routers = (await call('GET', `/edge-routers?filter=${encodeURIComponent('name contains "rc-router-"')}`)).body
      .data as { id: string; name: string }[];
    expect(routers).toHaveLength(3);
    const legacy = routers[0]!;
    // An id-order item written before its record carried appData.
    const db = controller().deps.store.db;
    const TableName = controller().deps.config.tableName;
    const Key = keys.idOrder('edge-routers', legacy.id);
    const item = (await db.send(new GetCommand({ TableName, Key }))).Item ?? {};
    const { appData: _dropped, ...olderRecord } = JSON.parse(String(item.record)) as Record<string, unknown>;
    await db.send(new PutCommand({ TableName, Item: { ...item, record: JSON.stringify(olderRecord) } }));
    let body: { data: { edgeRouters: { name: string; appData: unknown }[] } } | undefined;
    const cost = await costOf(async () => {
      const response = await session(fresh.token, fresh.serviceId, 'Dial')();
      body = response.body;
      return response;
    }, 201);
    // 7 with the router read whole, and the 3 routers' connection items.
    expect(cost.keysRead).toBe(10);
    const shown = new Map((body?.data.edgeRouters ?? []).map((router) => [router.name, router.appData]));
    expect(shown).toEqual(new Map(routers.map((router) => [router.name, { zone: Number(router.name.slice(-1)) }])));
  });

  it('reads a policy selection item of the earlier layout (one attribute per field) alike, until the scan rewrites it', async () => {
    const legacy = await network('old-layout', 1, 1);
    const db = controller().deps.store.db;
    const TableName = controller().deps.config.tableName;
    const policy = (
      await call('GET', `/service-policies?filter=${encodeURIComponent('name = "rc-old-layout-Dial-0"')}`)
    ).body.data[0] as { id: string; identityRoles: string[]; serviceRoles: string[] };
    const key = keys.selection('identities', '#rc-old-layout', 'service-policies', policy.id);
    const current = (await db.send(new GetCommand({ TableName, Key: key }))).Item;
    expect(current).toEqual({ ...key, record: expect.any(String) });
    // As the item was written before its record was one attribute: the record's fields, the id, the collection.
    await db.send(
      new PutCommand({
        TableName,
        Item: {
          ...key,
          id: policy.id,
          semantic: 'AnyOf',
          type: 'Dial',
          identityRoles: { $json: JSON.stringify(policy.identityRoles) },
          serviceRoles: { $json: JSON.stringify(policy.serviceRoles) },
          postureCheckRoles: { $json: '[]' },
          policyId: policy.id,
          policyCollection: 'service-policies',
        },
      }),
    );
    expect(await permissionsListed(legacy.token)).toEqual([
      ['rc-old-layout', ['Bind', 'Dial']],
      ['rc-old-layout-other', ['Bind', 'Dial']],
    ]);
    await expectSelectionFixed();
    expect((await db.send(new GetCommand({ TableName, Key: key }))).Item).toEqual(current);
  });

  it('answers from the policy itself when a selection item does not parse, and the integrity scan finds the item', async () => {
    const damaged = await network('damaged', 1, 1);
    const { db, tableName: TableName } = controller().deps.store;
    const policy = (await call('GET', `/service-policies?filter=${encodeURIComponent('name = "rc-damaged-Dial-0"')}`))
      .body.data[0] as { id: string };
    const key = keys.selection('identities', '#rc-damaged', 'service-policies', policy.id);
    // Too short for its layout: no role field reads.
    await db.send(new PutCommand({ TableName, Item: { ...key, record: '["AnyOf"]' } }));
    expect(await permissionsListed(damaged.token)).toEqual([
      ['rc-damaged', ['Bind', 'Dial']],
      ['rc-damaged-other', ['Bind', 'Dial']],
    ]);
    await expectSelectionFixed();
  });
});
