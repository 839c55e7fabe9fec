import { beforeAll, describe, expect, it } from 'vitest';
import { type Session, sessionIdFor, sessions } from '#shared/entities/session.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';

const C = '/edge/client/v1';
const { controller, call, createdId, userUnder } = useAdminController();

const clientGet = (path: string, token: string, headers?: Record<string, string>) =>
  controller().call('GET', `${C}${path}`, { token, ...(headers ? { headers } : {}) });

async function clientUser(name: string, roleAttributes: string[]) {
  const user = await userUnder('default', name);
  await call('PATCH', `/identities/${user.identityId}`, { roleAttributes });
  const response = await controller().call('POST', `${C}/authenticate?method=password`, {
    body: { username: user.username, password: user.password },
  });
  return { ...user, token: response.body.data.token as string, apiSessionId: response.body.data.id as string };
}

const names = (list: { name: string }[]) => list.map((item) => item.name).sort();

describe('client edge routers', () => {
  let erin: Awaited<ReturnType<typeof clientUser>>;
  let outsider: Awaited<ReturnType<typeof clientUser>>;
  let publicA: string;
  let privateB: string;
  let publicC: string;
  let erp: string;
  let svc: string;
  let hidden: string;

  beforeAll(async () => {
    erin = await clientUser('cer-erin', ['cer-eng']);
    outsider = await clientUser('cer-outsider', ['cer-other']);
    publicA = await createdId('/edge-routers', { name: 'cer-a', roleAttributes: ['public'], appData: { site: 'a' } });
    privateB = await createdId('/edge-routers', { name: 'cer-b', roleAttributes: ['private'] });
    publicC = await createdId('/edge-routers', { name: 'cer-c', roleAttributes: ['public'], cost: 9 });
    erp = await createdId('/edge-router-policies', {
      name: 'cer-erp',
      semantic: 'AnyOf',
      identityRoles: ['#cer-eng'],
      edgeRouterRoles: ['#public'],
    });
    svc = await createdId('/services', { name: 'cer-svc', roleAttributes: ['cer-svc'] });
    hidden = await createdId('/services', { name: 'cer-hidden', roleAttributes: [] });
    await createdId('/service-policies', {
      name: 'cer-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#cer-eng'],
      serviceRoles: ['#cer-svc'],
    });
    await createdId('/service-edge-router-policies', {
      name: 'cer-serp',
      semantic: 'AnyOf',
      serviceRoles: ['#cer-svc'],
      edgeRouterRoles: [`@${publicC}`, '#private'],
    });
  });

  it('lists the edge routers the caller edge router policies grant, in the client view, as policies change', async () => {
    const response = await clientGet('/current-identity/edge-routers', erin.token);
    expect(response.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/current-identity/edge-routers', 200, response.body);
    expect(names(response.body.data)).toEqual(['cer-a', 'cer-c']);
    const a = response.body.data.find((router: { id: string }) => router.id === publicA);
    expect(a).toMatchObject({
      name: 'cer-a',
      isOnline: false,
      disabled: false,
      appData: { site: 'a' },
      _links: { self: { href: `./edge-routers/${publicA}` } },
    });
    for (const hiddenField of ['roleAttributes', 'enrollmentToken', 'fingerprint', 'isVerified']) {
      expect(a).not.toHaveProperty(hiddenField);
    }
    expect((await clientGet('/current-identity/edge-routers', outsider.token)).body.data).toEqual([]);

    await call('PATCH', `/edge-router-policies/${erp}`, { edgeRouterRoles: ['#private'] });
    const granted = (await clientGet('/current-identity/edge-routers', erin.token)).body.data;
    expect(granted.map((router: { id: string }) => router.id)).toEqual([privateB]);
    await call('PATCH', `/edge-router-policies/${erp}`, { edgeRouterRoles: ['#public'] });
    await call('DELETE', `/edge-routers/${publicA}`);
    expect(names((await clientGet('/current-identity/edge-routers', erin.token)).body.data)).toEqual(['cer-c']);
    const paged = await clientGet('/current-identity/edge-routers?limit=1&filter=name%3D%22cer-c%22', erin.token);
    expect(names(paged.body.data)).toEqual(['cer-c']);
    expect((await controller().call('GET', `${C}/current-identity/edge-routers`)).status).toBe(401);
  });

  it('lists the routers a reachable service may use: the caller routers its service edge router policies allow', async () => {
    const response = await clientGet(`/services/${svc}/edge-routers`, erin.token);
    expect(response.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/services/{id}/edge-routers', 200, response.body);
    // cer-b is allowed for the service, but not granted to erin; cer-a is erin's but not the service's.
    expect(response.body.data).toEqual({
      edgeRouters: [
        {
          name: 'cer-c',
          hostname: '',
          supportedProtocols: {},
          syncStatus: 'SYNC_UNKNOWN',
          isOnline: false,
          cost: 9,
          noTraversal: false,
          disabled: false,
          appData: {},
        },
      ],
    });
    for (const [token, id] of [
      [erin.token, hidden],
      [outsider.token, svc],
      [erin.token, 'no-such-service'],
    ] as const) {
      const missing = await clientGet(`/services/${id}/edge-routers`, token);
      expect(missing.status).toBe(404);
    }
    expect((await controller().call('GET', `${C}/services/${svc}/edge-routers`)).status).toBe(401);
  });

  it('takes a session-token header only when it names a session of the caller API session', async () => {
    const refused = await clientGet(`/services/${svc}/edge-routers`, erin.token, { 'session-token': 'not-a-session' });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');

    const now = new Date().toISOString();
    const session: Session = {
      id: sessionIdFor(erin.apiSessionId, 'Dial', svc),
      createdAt: now,
      updatedAt: now,
      tags: {},
      token: 'cer-session-token',
      type: 'Dial',
      identityId: erin.identityId,
      apiSessionId: erin.apiSessionId,
      serviceId: svc,
      servicePolicyIds: [],
    };
    const { store } = controller().deps;
    await store.transact(store.createOps(sessions, session));
    const accepted = await clientGet(`/services/${svc}/edge-routers`, erin.token, {
      'session-token': 'cer-session-token',
    });
    expect(accepted.status).toBe(200);
    // The token of another API session, even of the same identity, is no good.
    const again = await controller().call('POST', `${C}/authenticate?method=password`, {
      body: { username: erin.username, password: erin.password },
    });
    const other = await clientGet(`/services/${svc}/edge-routers`, again.body.data.token, {
      'session-token': 'cer-session-token',
    });
    expect(other.status).toBe(401);
  });

  it('lists the terminators of a reachable service in the client view, and 404 for any other', async () => {
    const router = await createdId('/edge-routers', { name: 'cer-host', roleAttributes: [] });
    const terminator = await createdId('/terminators', {
      service: svc,
      router,
      binding: 'edge',
      address: 'hosted:1',
      identity: 'host-1',
    });
    const response = await clientGet(`/services/${svc}/terminators`, erin.token);
    expect(response.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/services/{id}/terminators', 200, response.body);
    expect(response.body.data).toEqual([
      expect.objectContaining({
        id: terminator,
        serviceId: svc,
        service: expect.objectContaining({ id: svc, name: 'cer-svc' }),
        routerId: router,
        identity: 'host-1',
      }),
    ]);
    expect(response.body.data[0]).not.toHaveProperty('address');
    expect(response.body.meta.pagination).toMatchObject({ totalCount: 1 });
    expect((await clientGet(`/services/${svc}/terminators?filter=identity%3D%22x%22`, erin.token)).body.data).toEqual(
      [],
    );
    expect((await clientGet(`/services/${hidden}/terminators`, erin.token)).status).toBe(404);
    expect((await clientGet(`/services/${svc}/terminators`, outsider.token)).status).toBe(404);
    const bad = await clientGet(`/services/${svc}/terminators?filter=nope%3D1`, erin.token);
    expect(bad.status).toBe(400);
  });
});
