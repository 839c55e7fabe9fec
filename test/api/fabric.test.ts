import { beforeAll, describe, expect, it } from 'vitest';
import { type CircuitRecord, putCircuit } from '#shared/store/circuit-items.ts';
import { recordLinkLatency, reportLink } from '#shared/store/link-items.ts';
import { putRouterConnection } from '#shared/store/router-connections.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  enrolledEdgeRouter,
  fingerprintOfCredentials,
  routerConnectionOf,
} from '../support/ctrl-router.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';

const F = '/fabric/v1';
const { controller, admin, call, createdId, userUnder, login, clientLogin } = useAdminController();

/** A fabric API request with the admin's management API session (or another token). */
const fabric = (path: string, token = admin(), method = 'GET') => controller().call(method, `${F}${path}`, { token });
const filtered = (path: string, filter: string) => fabric(`${path}?filter=${encodeURIComponent(filter)}`);

let online: { id: string; credentials: Credentials };
let edgeId: string;
let transitId: string;
let serviceId: string;

beforeAll(async () => {
  online = await enrolledEdgeRouter(controller, call, 'fab-edge-online');
  // Its control channel's connection item, as the endpoint holding the channel writes it after the hello.
  const written = await putRouterConnection(
    controller().deps.store,
    'edge-routers',
    routerConnectionOf(online.id),
    fingerprintOfCredentials(online.credentials),
  );
  if (!written) throw new Error('the online router was not recorded connected');
  edgeId = await createdId('/edge-routers', { name: 'fab-edge-offline', cost: 7 });
  transitId = await createdId('/transit-routers', { name: 'fab-transit', noTraversal: true });
  serviceId = await createdId('/services', {
    name: 'fab-echo',
    terminatorStrategy: 'random',
    maxIdleTimeMillis: 60_000,
  });
});

describe('the fabric API, for admins only', () => {
  it('answers 401 in the error envelope without a session, to a non-admin, and to an admin of the client API', async () => {
    const user = await userUnder('default', 'fab-not-admin');
    const userToken = (await login(user.username, user.password)).body.data.token as string;
    const clientAdmin = (await clientLogin(ADMIN_USERNAME, ADMIN_PASSWORD)).body.data.token as string;

    const anonymous = await controller().call('GET', `${F}/routers`);
    const notAdmin = await fabric('/links', userToken);
    const clientSession = await fabric('/circuits', clientAdmin);

    for (const response of [anonymous, notAdmin, clientSession]) {
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('UNAUTHORIZED');
    }
    expectMatchesSpec('fabric', 'GET', '/routers', 401, anonymous.body);
    expect(clientSession.body.error.cause.message).toMatch(/management\/v1\/authenticate/);
  });

  it('serves reads only: a write to a fabric path is 405, an unknown one 404, each in the envelope', async () => {
    const post = await fabric('/links', admin(), 'POST');
    const unknown = await fabric('/inspections');

    expect([post.status, post.body.error.code]).toEqual([405, 'METHOD_NOT_ALLOWED']);
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('GET /fabric/v1/routers', () => {
  it('lists edge and transit routers together, online from their connections, with the pagination the CLI reads', async () => {
    const response = await fabric('/routers');

    expect(response.status).toBe(200);
    expectMatchesSpec('fabric', 'GET', '/routers', 200, response.body);
    expect(response.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 3 });
    const byName = new Map(response.body.data.map((router: { name: string }) => [router.name, router]));
    expect(byName.get('fab-edge-online')).toMatchObject({
      id: online.id,
      connected: true,
      fingerprint: fingerprintOfCredentials(online.credentials),
      versionInfo: { version: 'v2.0.0-pre12', os: 'linux', arch: 'amd64' },
      _links: { self: { href: `./routers/${online.id}` } },
    });
    expect(byName.get('fab-edge-offline')).toMatchObject({ id: edgeId, connected: false, cost: 7, fingerprint: null });
    expect(byName.get('fab-transit')).toMatchObject({ id: transitId, connected: false, noTraversal: true });
    expect(byName.get('fab-transit')).not.toHaveProperty('versionInfo');
  });

  it('filters, sorts and pages across both types, as the CLI sends its filter', async () => {
    const named = await filtered('/routers', 'name contains "fab-" sort by name desc skip 1 limit 2');
    const transit = await filtered('/routers', 'noTraversal = true');

    expect(named.body.data.map((router: { name: string }) => router.name)).toEqual([
      'fab-edge-online',
      'fab-edge-offline',
    ]);
    expect(named.body.meta.pagination).toEqual({ limit: 2, offset: 1, totalCount: 3 });
    expect(transit.body.data.map((router: { id: string }) => router.id)).toEqual([transitId]);
  });

  it('shows one router of either type, 404 for an id of none', async () => {
    const edge = await fabric(`/routers/${online.id}`);
    const transit = await fabric(`/routers/${transitId}`);
    const missing = await fabric('/routers/no-such-router');

    expectMatchesSpec('fabric', 'GET', '/routers/{id}', 200, edge.body);
    expect(edge.body.data).toMatchObject({ name: 'fab-edge-online', connected: true });
    expect(transit.body.data).toMatchObject({ name: 'fab-transit', connected: false });
    expect(missing.status).toBe(404);
    expectMatchesSpec('fabric', 'GET', '/routers/{id}', 404, missing.body);
  });

  it('answers a filter on a field routers do not have with 400 INVALID_FILTER', async () => {
    const response = await filtered('/routers', 'roleAttributes contains "x"');

    expect([response.status, response.body.error.code]).toEqual([400, 'INVALID_FILTER']);
  });
});

describe('GET /fabric/v1/terminators and /services', () => {
  it('shows a terminator with its router as a fabric router and its hosting instance as instanceId', async () => {
    const id = await createdId('/terminators', {
      service: serviceId,
      router: transitId,
      binding: 'transport',
      address: 'tcp:10.0.0.9:7',
      identity: 'instance-1',
      cost: 3,
    });

    const listed = await filtered('/terminators', `service = "${serviceId}"`);
    const detail = await fabric(`/terminators/${id}`);

    expectMatchesSpec('fabric', 'GET', '/terminators', 200, listed.body);
    expectMatchesSpec('fabric', 'GET', '/terminators/{id}', 200, detail.body);
    expect(listed.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 1 });
    expect(detail.body.data).toMatchObject({
      id,
      serviceId,
      service: { entity: 'services', id: serviceId, name: 'fab-echo' },
      routerId: transitId,
      router: {
        entity: 'routers',
        id: transitId,
        name: 'fab-transit',
        _links: { self: { href: `./routers/${transitId}` } },
      },
      binding: 'transport',
      address: 'tcp:10.0.0.9:7',
      instanceId: 'instance-1',
      cost: 3,
      precedence: 'default',
      hostId: '',
    });
    expect(detail.body.data).not.toHaveProperty('identitySecret');
  });

  it('shows services with their terminator strategy', async () => {
    const listed = await filtered('/services', 'name = "fab-echo"');
    const detail = await fabric(`/services/${serviceId}`);

    expectMatchesSpec('fabric', 'GET', '/services', 200, listed.body);
    expectMatchesSpec('fabric', 'GET', '/services/{id}', 200, detail.body);
    expect(listed.body.data).toHaveLength(1);
    expect(detail.body.data).toMatchObject({
      id: serviceId,
      name: 'fab-echo',
      terminatorStrategy: 'random',
      maxIdleTimeMillis: 60_000,
    });
  });
});

const circuit = (id: string, fields: Partial<CircuitRecord> = {}): CircuitRecord => ({
  id,
  sessionId: 'dial-session-1',
  serviceId,
  path: [online.id],
  terminatorId: 'terminator-1',
  clientId: 'dialer-identity',
  hostId: 'host-identity',
  endpointId: 'an-endpoint',
  createdAt: '2026-12-07T10:00:00.000Z',
  ...fields,
});

describe('GET /fabric/v1/circuits', () => {
  it('lists the stored circuits with their path as routers and the links between them', async () => {
    const empty = await fabric('/circuits');
    const { store } = controller().deps;
    await putCircuit(store, circuit('circuit-a'), new Date());
    await putCircuit(
      store,
      circuit('circuit-b', { sessionId: 'dial-session-2', path: [online.id, transitId], links: ['link-ab'] }),
      new Date(),
    );

    const listed = await fabric('/circuits');
    const bySession = await filtered('/circuits', 'clientId = "dial-session-2"');

    expect(empty.body).toMatchObject({ data: [], meta: { pagination: { limit: 10, offset: 0, totalCount: 0 } } });
    expectMatchesSpec('fabric', 'GET', '/circuits', 200, listed.body);
    expect(listed.body.meta.pagination.totalCount).toBe(2);
    expect(listed.body.data[0]).toMatchObject({
      id: 'circuit-a',
      clientId: 'dial-session-1',
      createdAt: '2026-12-07T10:00:00.000Z',
      service: { entity: 'services', id: serviceId, name: 'fab-echo' },
      terminator: { entity: 'terminators', id: 'terminator-1', name: 'terminator-1' },
      path: { nodes: [{ entity: 'routers', id: online.id, name: 'fab-edge-online' }], links: [] },
    });
    expect(bySession.body.data.map((c: { id: string }) => c.id)).toEqual(['circuit-b']);
    expect(bySession.body.data[0].path).toMatchObject({
      nodes: [{ name: 'fab-edge-online' }, { name: 'fab-transit' }],
      links: [{ entity: 'links', id: 'link-ab' }],
    });
  });

  it('shows one circuit until it ends', async () => {
    await putCircuit(controller().deps.store, circuit('circuit-c'), new Date());

    const detail = await fabric('/circuits/circuit-c');
    const missing = await fabric('/circuits/no-such-circuit');

    expectMatchesSpec('fabric', 'GET', '/circuits/{id}', 200, detail.body);
    expect(detail.body.data.id).toBe('circuit-c');
    expectMatchesSpec('fabric', 'GET', '/circuits/{id}', 404, missing.body);
  });
});

/**
 * A link as its dialing router reports it (`reportLink`, what a RouterLinks message writes), then each end's latency
 * as its metrics give it: what the endpoint holding the routers' channels writes.
 */
async function reportedLink(id: string, { source = online.id, dest = transitId, iteration = 1 } = {}): Promise<void> {
  const { store } = controller().deps;
  const now = new Date();
  const reporter = { routerId: source, connectionId: 'a-connection', endpointId: 'an-endpoint' };
  const reported = await reportLink(
    store,
    {
      id,
      iteration,
      destRouterId: dest,
      protocol: 'tls',
      dialAddress: 'tls:transit.example:6004',
      connections: [{ type: 'single', source: '10.0.0.1:50000', dest: '10.0.0.2:6004' }],
      connectionsIteration: 1,
    },
    reporter,
    now,
  );
  if (reported.outcome !== 'created') throw new Error(`link ${id} was ${reported.outcome}`);
  await recordLinkLatency(store, reported.link, 'source', 2_500_000, reporter.endpointId, now);
  await recordLinkLatency(store, reported.link, 'dest', 3_000_000, reporter.endpointId, now);
}

describe('GET /fabric/v1/links', () => {
  it('lists the links the routers reported (LINK# items, all in one GSI1 partition), with their routers by name', async () => {
    const empty = await fabric('/links');
    await reportedLink('link-1');
    await reportedLink('link-2', { iteration: 3, source: transitId, dest: edgeId });

    const listed = await fabric('/links');
    const third = await filtered('/links', 'iteration = 3');
    const second = await fabric('/links?limit=1&offset=1');

    expect(empty.body).toMatchObject({ data: [], meta: { pagination: { limit: 10, offset: 0, totalCount: 0 } } });
    expectMatchesSpec('fabric', 'GET', '/links', 200, listed.body);
    expect(listed.body.data[0]).toEqual({
      id: 'link-1',
      protocol: 'tls',
      sourceRouter: {
        entity: 'routers',
        id: online.id,
        name: 'fab-edge-online',
        _links: { self: { href: `./routers/${online.id}` } },
      },
      destRouter: {
        entity: 'routers',
        id: transitId,
        name: 'fab-transit',
        _links: { self: { href: `./routers/${transitId}` } },
      },
      state: 'Connected',
      down: false,
      staticCost: 1,
      sourceLatency: 2_500_000,
      destLatency: 3_000_000,
      cost: 6,
      iteration: 1,
      connections: [{ type: 'single', source: '10.0.0.1:50000', dest: '10.0.0.2:6004' }],
    });
    expect(third.body.data.map((l: { id: string }) => l.id)).toEqual(['link-2']);
    expect(third.body.data[0].destRouter.name).toBe('fab-edge-offline');
    expect(second.body.data.map((l: { id: string }) => l.id)).toEqual(['link-2']);
    expect(second.body.meta.pagination).toEqual({ limit: 1, offset: 1, totalCount: 2 });
  });

  it('shows one link, 404 for an id none has', async () => {
    await reportedLink('link-3');

    const detail = await fabric('/links/link-3');
    const missing = await fabric('/links/no-such-link');

    expectMatchesSpec('fabric', 'GET', '/links/{id}', 200, detail.body);
    expect(detail.body.data).toMatchObject({ id: 'link-3', state: 'Connected' });
    expectMatchesSpec('fabric', 'GET', '/links/{id}', 404, missing.body);
  });
});
