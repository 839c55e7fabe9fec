import { beforeAll, describe, expect, it } from 'vitest';
import { identityServiceConfigId, identityServiceConfigs } from '#shared/entities/identity-service-config.ts';
import { updatePostureData } from '#shared/posture/posture-data.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { dynamoDbTracker } from '../support/dynamodb-tracker.ts';

const C = '/edge/client/v1';
const { controller, admin, call, createdId, userUnder } = useAdminController();

interface ClientService {
  id: string;
  name: string;
  permissions: string[];
  config: Record<string, unknown>;
  postureQueries: {
    policyId: string;
    policyType: string;
    isPassing: boolean;
    postureQueries: Record<string, unknown>[];
  }[];
}

const clientGet = (path: string, token: string) => controller().call('GET', `${C}${path}`, { token });

/** Logs a new non-admin identity in on the client API, with its role attributes and the config types it asks for. */
async function clientUser(name: string, roleAttributes: string[] = [], configTypes?: string[]) {
  const user = await userUnder('default', name);
  if (roleAttributes.length > 0) await call('PATCH', `/identities/${user.identityId}`, { roleAttributes });
  const response = await controller().call('POST', `${C}/authenticate?method=password`, {
    body: { username: user.username, password: user.password, ...(configTypes ? { configTypes } : {}) },
  });
  if (response.status !== 200) throw new Error(`login ${name}: ${response.status} ${response.text}`);
  return { ...user, token: response.body.data.token as string, apiSessionId: response.body.data.id as string };
}

const service = (name: string, roleAttributes: string[], configs: string[] = []) =>
  createdId('/services', { name, roleAttributes, configs });
const servicePolicy = (name: string, body: Record<string, unknown>) =>
  createdId('/service-policies', { name, semantic: 'AnyOf', ...body });

async function servicesOf(token: string, query = ''): Promise<ClientService[]> {
  const response = await clientGet(`/services${query}`, token);
  expect(response.status, response.text).toBe(200);
  expectMatchesSpec('client', 'GET', '/services', 200, response.body, [CONFIG_DATA_VALUES]);
  return response.body.data as ClientService[];
}

/**
 * The document types each value inside a config's data as an object (`additionalProperties` one level too deep); real
 * config data (ports, addresses) is any JSON, as the reference serves it.
 */
const CONFIG_DATA_VALUES =
  /\/config\/[^/]+\/[^ ]+: .*properties\/config\/additionalProperties\/additionalProperties\/type\]$/;

const names = (list: { name: string }[]) => list.map((item) => item.name).sort();

describe('client GET /services and GET /services/{id}', () => {
  let alice: Awaited<ReturnType<typeof clientUser>>;
  let web: string;
  let db: string;
  let hidden: string;
  let dialWeb: string;

  beforeAll(async () => {
    alice = await clientUser('cs-alice', ['eng']);
    web = await service('cs-web', ['web']);
    db = await service('cs-db', ['db']);
    hidden = await service('cs-hidden', ['hidden']);
    dialWeb = await servicePolicy('cs-dial-web', { type: 'Dial', identityRoles: ['#eng'], serviceRoles: ['#web'] });
    await servicePolicy('cs-bind-db', {
      type: 'Bind',
      identityRoles: [`@${alice.identityId}`],
      serviceRoles: [`@${db}`],
    });
    await servicePolicy('cs-dial-db', { type: 'Dial', identityRoles: ['#eng', '#ops'], serviceRoles: ['#db'] });
  });

  it('lists only the services the caller may dial or bind, each with its permissions', async () => {
    const list = await servicesOf(alice.token);
    expect(names(list)).toEqual(['cs-db', 'cs-web']);
    expect(list.find((item) => item.id === db)?.permissions).toEqual(['Bind', 'Dial']);
    expect(list.find((item) => item.id === web)?.permissions).toEqual(['Dial']);
    // No posture check exists in the network yet: no posture queries at all, as the reference shows.
    expect(list.every((item) => item.postureQueries.length === 0)).toBe(true);
  });

  it('shows one reachable service and answers 404 for one the caller cannot reach or that does not exist', async () => {
    const detail = await clientGet(`/services/${web}`, alice.token);
    expect(detail.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/services/{id}', 200, detail.body);
    expect(detail.body.data).toMatchObject({ id: web, name: 'cs-web', permissions: ['Dial'], config: {} });
    for (const id of [hidden, 'no-such-service']) {
      const missing = await clientGet(`/services/${id}`, alice.token);
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('shows admins only what policies grant them too, and refuses callers without a session', async () => {
    const asAdmin = await servicesOf(admin());
    expect(asAdmin.map((item) => item.id)).not.toContain(hidden);
    const anonymous = await controller().call('GET', `${C}/services`);
    expect(anonymous.status).toBe(401);
    expect((await controller().call('GET', `${C}/services/${web}`)).status).toBe(401);
  });

  it('loses and regains access the moment role attributes or policies change', async () => {
    await call('PATCH', `/identities/${alice.identityId}`, { roleAttributes: [] });
    expect(names(await servicesOf(alice.token))).toEqual(['cs-db']);
    expect((await servicesOf(alice.token))[0]?.permissions).toEqual(['Bind']);
    expect((await clientGet(`/services/${web}`, alice.token)).status).toBe(404);

    await call('PATCH', `/identities/${alice.identityId}`, { roleAttributes: ['eng'] });
    await call('PATCH', `/service-policies/${dialWeb}`, { serviceRoles: ['#web', '#hidden'] });
    expect(names(await servicesOf(alice.token))).toEqual(['cs-db', 'cs-hidden', 'cs-web']);
    expect((await clientGet(`/services/${hidden}`, alice.token)).status).toBe(200);

    await call('DELETE', `/service-policies/${dialWeb}`);
    expect(names(await servicesOf(alice.token))).toEqual(['cs-db']);
    dialWeb = await servicePolicy('cs-dial-web-2', { type: 'Dial', identityRoles: ['#eng'], serviceRoles: ['#web'] });
    expect(names(await servicesOf(alice.token))).toEqual(['cs-db', 'cs-web']);
  });

  it('pages, filters and sorts the caller services, and refuses a bad filter naming it', async () => {
    const first = await clientGet('/services?limit=1&offset=0&sort=name desc', alice.token);
    expect(first.body.data.map((item: ClientService) => item.name)).toEqual(['cs-web']);
    expect(first.body.meta.pagination).toEqual({ limit: 1, offset: 0, totalCount: 2 });
    const second = await clientGet('/services?limit=1&offset=1&sort=name desc', alice.token);
    expect(second.body.data.map((item: ClientService) => item.name)).toEqual(['cs-db']);

    const filtered = await servicesOf(alice.token, `?filter=${encodeURIComponent('name contains "we"')}`);
    expect(names(filtered)).toEqual(['cs-web']);
    // A filter never reaches beyond what the caller may see.
    expect(await servicesOf(alice.token, `?filter=${encodeURIComponent('name = "cs-hidden"')}`)).toEqual([]);
    expect(names(await servicesOf(alice.token, '?roleFilter=%23db'))).toEqual(['cs-db']);

    const bad = await clientGet(`/services?filter=${encodeURIComponent('name ==')}`, alice.token);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_FILTER');
    expect(bad.body.error.cause.field).toBe('filter');
    const badSort = await clientGet('/services?sort=nope', alice.token);
    expect(badSort.status).toBe(400);
    const badLimit = await clientGet('/services?limit=many', alice.token);
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.error.cause.field).toBe('limit');
    // Config types that name nothing (empty, unknown, longer than any key) show no config data, and fail nothing.
    for (const configTypes of ['', ',', 'nope', 'x'.repeat(3000)]) {
      const listed = await servicesOf(alice.token, `?configTypes=${configTypes}`);
      expect(listed.every((item) => Object.keys(item.config).length === 0)).toBe(true);
    }
  });
});

describe('config data and identity service-config overrides', () => {
  it('shows the data of the config types asked for, by name or id, at login or per request, overrides applied', async () => {
    const interceptType = await createdId('/config-types', { name: 'cs-intercept.v1', schema: {} });
    const hostType = await createdId('/config-types', { name: 'cs-host.v1', schema: {} });
    const intercept = await createdId('/configs', {
      name: 'cs-intercept',
      configTypeId: interceptType,
      data: { port: 80 },
    });
    const host = await createdId('/configs', { name: 'cs-host', configTypeId: hostType, data: { address: 'h' } });
    const mine = await createdId('/configs', {
      name: 'cs-intercept-mine',
      configTypeId: interceptType,
      data: { port: 8080 },
    });
    const svc = await service('cs-configured', ['configured'], [intercept, host]);
    const bob = await clientUser('cs-bob', ['cfg'], ['cs-host.v1']);
    await servicePolicy('cs-dial-configured', { type: 'Dial', identityRoles: ['#cfg'], serviceRoles: ['#configured'] });

    // The config types the session asked for at login.
    const [atLogin] = await servicesOf(bob.token);
    expect(atLogin?.config).toEqual({ 'cs-host.v1': { address: 'h' } });
    // The query's config types replace the session's, by name or by id; unknown ones name nothing.
    expect((await servicesOf(bob.token, '?configTypes=cs-intercept.v1'))[0]?.config).toEqual({
      'cs-intercept.v1': { port: 80 },
    });
    expect((await servicesOf(bob.token, `?configTypes=${interceptType},nope`))[0]?.config).toEqual({
      'cs-intercept.v1': { port: 80 },
    });
    expect((await servicesOf(bob.token, '?configTypes=all'))[0]?.config).toEqual({
      'cs-intercept.v1': { port: 80 },
      'cs-host.v1': { address: 'h' },
    });

    // An override of the identity replaces the service's config of that type, for this identity only.
    const now = new Date().toISOString();
    await controller().deps.store.transact(
      controller().deps.store.createOps(identityServiceConfigs, {
        id: identityServiceConfigId(bob.identityId, svc, interceptType),
        createdAt: now,
        updatedAt: now,
        tags: {},
        identityId: bob.identityId,
        serviceId: svc,
        configId: mine,
        configTypeId: interceptType,
      }),
    );
    expect((await servicesOf(bob.token, '?configTypes=all'))[0]?.config).toEqual({
      'cs-intercept.v1': { port: 8080 },
      'cs-host.v1': { address: 'h' },
    });
    const detail = await clientGet(`/services/${svc}?configTypes=cs-intercept.v1`, bob.token);
    expect(detail.body.data.config).toEqual({ 'cs-intercept.v1': { port: 8080 } });
    // The session's config type is not overridden: the service's own config shows.
    expect((await clientGet(`/services/${svc}`, bob.token)).body.data.config).toEqual({
      'cs-host.v1': { address: 'h' },
    });
  });
});

describe('posture queries', () => {
  it('lists each granting policy with its posture checks and whether they pass', async () => {
    const carol = await clientUser('cs-carol', ['posture']);
    const svc = await service('cs-guarded', ['guarded']);
    const domain = await createdId('/posture-checks', {
      name: 'cs-domain',
      typeId: 'DOMAIN',
      domains: ['corp.example'],
      roleAttributes: ['corp'],
    });
    const mfa = await createdId('/posture-checks', {
      name: 'cs-mfa',
      typeId: 'MFA',
      timeoutSeconds: 600,
      promptOnWake: true,
      promptOnUnlock: false,
      roleAttributes: ['corp'],
    });
    const process = await createdId('/posture-checks', {
      name: 'cs-process',
      typeId: 'PROCESS',
      process: { osType: 'Linux', path: '/usr/bin/agent', hashes: [], signerFingerprint: '' },
      roleAttributes: ['proc'],
    });
    const guarded = await servicePolicy('cs-guarded-dial', {
      type: 'Dial',
      identityRoles: ['#posture'],
      serviceRoles: ['#guarded'],
      postureCheckRoles: ['#corp'],
    });
    const plain = await servicePolicy('cs-guarded-bind', {
      type: 'Bind',
      identityRoles: ['#posture'],
      serviceRoles: ['#guarded'],
    });
    const processPolicy = await servicePolicy('cs-guarded-proc', {
      type: 'Dial',
      identityRoles: ['#posture'],
      serviceRoles: ['#guarded'],
      postureCheckRoles: [`@${process}`],
    });

    const [listed] = await servicesOf(carol.token);
    const detail = await clientGet(`/services/${svc}`, carol.token);
    expectMatchesSpec('client', 'GET', '/services/{id}', 200, detail.body);
    for (const view of [listed, detail.body.data as ClientService]) {
      const byPolicy = new Map(view?.postureQueries.map((set) => [set.policyId, set]));
      expect(byPolicy.get(plain)).toEqual({ policyId: plain, policyType: 'Bind', isPassing: true, postureQueries: [] });
      const guardedSet = byPolicy.get(guarded);
      expect(guardedSet).toMatchObject({ policyType: 'Dial', isPassing: false });
      const queries = new Map(guardedSet?.postureQueries.map((query) => [query.id, query]));
      expect(queries.get(domain)).toMatchObject({
        queryType: 'DOMAIN',
        isPassing: false,
        timeout: -1,
        timeoutRemaining: -1,
      });
      expect(queries.get(mfa)).toMatchObject({ queryType: 'MFA', isPassing: false, timeout: 600, promptOnWake: true });
      expect(byPolicy.get(processPolicy)?.postureQueries).toEqual([
        expect.objectContaining({
          id: process,
          queryType: 'PROCESS',
          process: { osType: 'Linux', path: '/usr/bin/agent' },
        }),
      ]);
    }

    // The session reports its domain and passes MFA: the policy's checks pass, and the MFA timeout starts running.
    const now = new Date().toISOString();
    const owner = { identityId: carol.identityId, apiSessionId: carol.apiSessionId };
    await updatePostureData(controller().deps, owner, (data) => ({
      ...data,
      domain: { postureCheckId: domain, name: 'corp.example', lastUpdatedAt: now },
      mfa: { passedAt: now },
    }));
    const after = (await clientGet(`/services/${svc}`, carol.token)).body.data as ClientService;
    const passing = after.postureQueries.find((set) => set.policyId === guarded);
    expect(passing?.isPassing).toBe(true);
    const mfaQuery = passing?.postureQueries.find((query) => query.id === mfa);
    expect(mfaQuery).toMatchObject({ isPassing: true, timeout: 600 });
    expect(mfaQuery?.timeoutRemaining).toBeGreaterThan(500);
    expect(after.postureQueries.find((set) => set.policyId === processPolicy)?.isPassing).toBe(false);
  });
});

describe('client service writes', () => {
  it('lets admins replace, patch and delete a service on the client API, and no one else', async () => {
    const dave = await clientUser('cs-dave');
    const id = await service('cs-client-write', []);
    const path = `${C}/services/${id}`;
    for (const [method, body] of [
      ['PUT', { name: 'cs-client-write-2' }],
      ['PATCH', { roleAttributes: ['x'] }],
      ['DELETE', undefined],
    ] as const) {
      const refused = await controller().call(method, path, { token: dave.token, ...(body ? { body } : {}) });
      expect(refused.status, method).toBe(401);
    }
    expect((await controller().call('PUT', path, { token: admin(), body: { name: 'cs-client-write-2' } })).status).toBe(
      200,
    );
    expect((await controller().call('PATCH', path, { token: admin(), body: { roleAttributes: ['x'] } })).status).toBe(
      200,
    );
    expect((await call('GET', `/services/${id}`)).body.data).toMatchObject({
      name: 'cs-client-write-2',
      roleAttributes: ['x'],
    });
    const bad = await controller().call('PATCH', path, { token: admin(), body: { name: 7 } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.cause)).toContain('name');
    expect((await controller().call('DELETE', path, { token: admin() })).status).toBe(200);
    expect((await call('GET', `/services/${id}`)).status).toBe(404);
  });
});

describe('DynamoDB round trips of GET /services', () => {
  it('stays at the same waves and requests for 1 or 20 policies, services, configs and posture checks', async () => {
    const typeId = await createdId('/config-types', { name: 'cs-scale.v1', schema: {} });
    await createdId('/posture-checks', {
      name: 'cs-scale-check',
      typeId: 'DOMAIN',
      domains: ['x'],
      roleAttributes: ['scale'],
    });

    /** `count` services, each with a config, granted by `count` policies naming the same roles. */
    async function network(label: string, count: number, distinctRoles: boolean) {
      const user = await clientUser(`cs-${label}`, [label], ['cs-scale.v1']);
      for (let i = 0; i < count; i++) {
        const pool = distinctRoles ? `${label}-${i}` : label;
        const config = await createdId('/configs', { name: `cs-${label}-${i}`, configTypeId: typeId, data: { i } });
        await service(`cs-${label}-${i}`, [pool], [config]);
        await servicePolicy(`cs-${label}-${i}`, {
          type: i % 2 === 0 ? 'Dial' : 'Bind',
          identityRoles: [`#${label}`],
          serviceRoles: [`#${pool}`],
          postureCheckRoles: ['#scale'],
        });
      }
      return user;
    }
    const one = await network('scale-one', 1, false);
    const many = await network('scale-many', 20, false);
    const spread = await network('scale-spread', 20, true);

    const tracker = dynamoDbTracker(controller().deps.store.db);
    const list = (token: string) => async () => {
      const response = await clientGet('/services?limit=500', token);
      expect(response.status).toBe(200);
    };
    // Each caller lists once before it is measured, so no measurement includes anything a first call sets up.
    for (const user of [one, many, spread]) await list(user.token)();
    const ofOne = await tracker.measure(list(one.token));
    const ofMany = await tracker.measure(list(many.token));
    const ofSpread = await tracker.measure(list(spread.token));
    expect((await servicesOf(many.token, '?limit=500')).length).toBe(20);
    expect(ofMany).toEqual(ofOne);
    expect(ofSpread.waves).toBe(ofOne.waves);
    // Two to resolve the caller (its API session, then its identity), four for the services.
    expect(ofOne.waves).toBeLessThanOrEqual(6);

    // A filter and another sort read the granted services whole: no wave more.
    const filtered = (token: string) => async () => {
      const query = `?limit=500&sort=name desc&filter=${encodeURIComponent('name contains "cs-"')}`;
      const response = await clientGet(`/services${query}`, token);
      expect(response.status).toBe(200);
    };
    const filteredOfOne = await tracker.measure(filtered(one.token));
    const filteredOfSpread = await tracker.measure(filtered(spread.token));
    expect(filteredOfOne.waves).toBe(ofOne.waves);
    expect(filteredOfSpread.waves).toBe(ofOne.waves);
    expect(names(await servicesOf(spread.token, '?limit=500&sort=name desc&filter=name contains "spread-1"'))).toEqual(
      ['cs-scale-spread-1', ...Array.from({ length: 10 }, (_, i) => `cs-scale-spread-1${i}`)].sort(),
    );
  });
});

describe('client GET /services with a policy granting #all services', () => {
  it('pages every service in id order with the counted total, each with the permissions its policies give', async () => {
    const bindable = await service('all-grant-bindable', ['all-grant-bind']);
    const user = await clientUser('all-grant-user', ['all-grant']);
    await servicePolicy('all-grant-dial', { type: 'Dial', identityRoles: ['#all-grant'], serviceRoles: ['#all'] });
    await servicePolicy('all-grant-bind', {
      type: 'Bind',
      identityRoles: ['#all-grant'],
      serviceRoles: ['#all-grant-bind'],
    });
    const everyService = await call('GET', '/services?limit=500');
    const total = everyService.body.meta.pagination.totalCount as number;
    const expectedIds = (everyService.body.data as { id: string }[]).map((s) => s.id).sort();

    const firstPage = await clientGet('/services?limit=3', user.token);
    const secondPage = await clientGet('/services?limit=500&offset=3', user.token);
    expect(firstPage.body.meta.pagination.totalCount).toBe(total);
    const listed = [...firstPage.body.data, ...secondPage.body.data] as ClientService[];
    expect(listed.map((s) => s.id)).toEqual(expectedIds);
    for (const listedService of listed) {
      expect(listedService.permissions, listedService.name).toEqual(
        listedService.id === bindable ? ['Bind', 'Dial'] : ['Dial'],
      );
    }
    // With a filter the granted ids are resolved and paged as usual: same services, same permissions.
    const filtered = (await servicesOf(user.token, `?filter=${encodeURIComponent('name = "all-grant-bindable"')}`))[0];
    expect(filtered?.permissions).toEqual(['Bind', 'Dial']);
  });
});
