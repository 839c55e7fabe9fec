import { beforeAll, describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';

const { call, createdId } = useAdminController();

/**
 * Our spec (§2.13) has an edge router's `fingerprint` nullable: it is null until the router enrolls. The document types
 * it as a plain string; every other part of the response must fit.
 */
function expectFitsSpecButFingerprint(method: string, path: string, status: number, body: unknown) {
  expectMatchesSpec('management', method, path, status, body, [/^\/data(\/\d+)?\/fingerprint: must be string/]);
}

const ids = (response: { body: { data: { id: string }[] } }) => response.body.data.map((router) => router.id);
const names = (response: { body: { data: { name: string }[] } }) => response.body.data.map((router) => router.name);

describe('edge routers', () => {
  it('creates an edge router with its one-time enrollment and shows it offline and unverified', async () => {
    const created = await call('POST', '/edge-routers', {
      name: 'er-detail',
      cost: 7,
      noTraversal: true,
      roleAttributes: ['east'],
      appData: { site: { rack: 3 } },
      tags: { env: 'test' },
    });
    const detail = await call('GET', `/edge-routers/${created.body.data.id}`);

    expect(created.status).toBe(201);
    expectMatchesSpec('management', 'POST', '/edge-routers', 201, created.body);
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({
      id: created.body.data.id,
      name: 'er-detail',
      cost: 7,
      noTraversal: true,
      disabled: false,
      isTunnelerEnabled: false,
      roleAttributes: ['east'],
      appData: { site: { rack: 3 } },
      tags: { env: 'test' },
      isOnline: false,
      isVerified: false,
      fingerprint: null,
      // Signed when the router was made; its claims are checked in enrollment-jwt.test.ts.
      enrollmentJwt: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      supportedProtocols: {},
      _links: { self: { href: `./edge-routers/${created.body.data.id}` } },
    });
    expect(detail.body.data.enrollmentToken).toMatch(/\S{16,}/);
    const createdAt = Date.parse(detail.body.data.enrollmentCreatedAt);
    expect(Date.parse(detail.body.data.enrollmentExpiresAt) - createdAt).toBe(180 * 60_000);
    expectFitsSpecButFingerprint('GET', '/edge-routers/{id}', 200, detail.body);
  });

  it('replaces with zero values for what is not sent, patches only what is sent, and deletes', async () => {
    const id = await createdId('/edge-routers', {
      name: 'er-update',
      cost: 5,
      roleAttributes: ['a'],
      noTraversal: true,
    });

    const replaced = await call('PUT', `/edge-routers/${id}`, { name: 'er-update-2', disabled: true });
    const afterReplace = (await call('GET', `/edge-routers/${id}`)).body.data;
    const patched = await call('PATCH', `/edge-routers/${id}`, { cost: 9, appData: { a: [1, 'x'] } });
    const afterPatch = (await call('GET', `/edge-routers/${id}`)).body.data;
    const deleted = await call('DELETE', `/edge-routers/${id}`);

    expect([replaced.status, patched.status, deleted.status]).toEqual([200, 200, 200]);
    expectMatchesSpec('management', 'PUT', '/edge-routers/{id}', 200, replaced.body);
    expectMatchesSpec('management', 'PATCH', '/edge-routers/{id}', 200, patched.body);
    expectMatchesSpec('management', 'DELETE', '/edge-routers/{id}', 200, deleted.body);
    expect(afterReplace).toMatchObject({
      name: 'er-update-2',
      cost: 0,
      roleAttributes: [],
      noTraversal: false,
      disabled: true,
    });
    expect(afterPatch).toMatchObject({ name: 'er-update-2', cost: 9, disabled: true, appData: { a: [1, 'x'] } });
    expect((await call('GET', `/edge-routers/${id}`)).status).toBe(404);
  });

  it.each([
    ['no name', { cost: 1 }, 'name'],
    ['a cost above 65535', { name: 'er-bad-1', cost: 65536 }, 'cost'],
    ['a negative cost', { name: 'er-bad-2', cost: -1 }, 'cost'],
    ['a cost that is not an integer', { name: 'er-bad-3', cost: 1.5 }, 'cost'],
    ['a string for a flag', { name: 'er-bad-4', isTunnelerEnabled: 'yes' }, 'isTunnelerEnabled'],
    ['a role attribute written as a role', { name: 'er-bad-5', roleAttributes: ['#all'] }, 'roleAttributes.0'],
    ['app data that is not an object', { name: 'er-bad-6', appData: [1] }, 'appData'],
    ['a tag value that is an object', { name: 'er-bad-7', tags: { a: { b: 1 } } }, 'tags.a'],
  ])('answers 400 COULD_NOT_VALIDATE for %s', async (_case, body, field) => {
    const response = await call('POST', '/edge-routers', body);

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/edge-routers' });
  });

  it('refuses a name another router holds, edge or transit', async () => {
    await createdId('/edge-routers', { name: 'er-taken' });
    await createdId('/transit-routers', { name: 'tr-taken' });

    const edgeTwice = await call('POST', '/edge-routers', { name: 'er-taken' });
    const transitName = await call('POST', '/edge-routers', { name: 'tr-taken' });
    const renamed = await call('PATCH', `/edge-routers/${await createdId('/edge-routers', { name: 'er-free' })}`, {
      name: 'tr-taken',
    });

    for (const response of [edgeTwice, transitName, renamed]) {
      expect(response.status).toBe(400);
      expect(response.body.error.cause.field).toBe('name');
    }
  });

  it('answers 404 for an edge router that does not exist', async () => {
    const detail = await call('GET', '/edge-routers/nope');
    const replaced = await call('PUT', '/edge-routers/nope', { name: 'x' });
    const patched = await call('PATCH', '/edge-routers/nope', { cost: 1 });
    const deleted = await call('DELETE', '/edge-routers/nope');

    expect([detail.status, replaced.status, patched.status, deleted.status]).toEqual([404, 404, 404, 404]);
    expectMatchesSpec('management', 'GET', '/edge-routers/{id}', 404, detail.body);
    expectMatchesSpec('management', 'PUT', '/edge-routers/{id}', 404, replaced.body);
    expectMatchesSpec('management', 'DELETE', '/edge-routers/{id}', 404, deleted.body);
  });
});

describe('the router identity of a tunneling edge router', () => {
  const identityOf = (id: string) => call('GET', `/identities/${id}`);

  it('is created with the router, renamed with it and deleted with it', async () => {
    const id = await createdId('/edge-routers', { name: 'er-tunnel', isTunnelerEnabled: true });

    const created = await identityOf(id);
    await call('PATCH', `/edge-routers/${id}`, { name: 'er-tunnel-renamed' });
    const renamed = await identityOf(id);
    await call('DELETE', `/edge-routers/${id}`);
    const afterDelete = await identityOf(id);

    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ id, name: 'er-tunnel', type: { id: 'Router' }, isAdmin: false });
    expect(renamed.body.data.name).toBe('er-tunnel-renamed');
    expect(afterDelete.status).toBe(404);
  });

  it('comes and goes as tunneling is turned on and off', async () => {
    const id = await createdId('/edge-routers', { name: 'er-toggle' });

    const before = await identityOf(id);
    await call('PATCH', `/edge-routers/${id}`, { isTunnelerEnabled: true });
    const on = await identityOf(id);
    await call('PUT', `/edge-routers/${id}`, { name: 'er-toggle' });
    const off = await identityOf(id);

    expect([before.status, on.status, off.status]).toEqual([404, 200, 404]);
    expect((await call('GET', `/edge-routers/${id}`)).body.data.isTunnelerEnabled).toBe(false);
  });

  it('matches the last word on tunneling when updates race, system policy included', async () => {
    const id = await createdId('/edge-routers', { name: 'er-race' });

    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, n) => call('PATCH', `/edge-routers/${id}`, { isTunnelerEnabled: n % 2 === 0 })),
    );
    const router = (await call('GET', `/edge-routers/${id}`)).body.data;
    const identity = await identityOf(id);

    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(200));
    expect(identity.status).toBe(router.isTunnelerEnabled ? 200 : 404);
    expect((await call('GET', `/edge-router-policies/${id}`)).status).toBe(router.isTunnelerEnabled ? 200 : 404);
  });

  it('refuses the router when an identity already holds its name, and writes nothing', async () => {
    await createdId('/identities', { name: 'er-clash', type: 'User', isAdmin: false });

    const response = await call('POST', '/edge-routers', { name: 'er-clash', isTunnelerEnabled: true });
    const listed = await call('GET', `/edge-routers?filter=${encodeURIComponent('name = "er-clash"')}`);

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('name');
    expect(listed.body.data).toEqual([]);
  });
});

describe('the system edge router policy of a tunneling edge router', () => {
  const policyOf = (id: string) => call('GET', `/edge-router-policies/${id}`);

  it('comes with the router, lets its identity use it, and goes with it', async () => {
    const id = await createdId('/edge-routers', { name: 'er-sys', isTunnelerEnabled: true });

    const policy = await policyOf(id);
    expect(policy.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/edge-router-policies/{id}', 200, policy.body);
    expect(policy.body.data).toMatchObject({
      id,
      name: `edge-router-${id}-system`,
      isSystem: true,
      semantic: 'AnyOf',
      identityRoles: [`@${id}`],
      edgeRouterRoles: [`@${id}`],
      identityRolesDisplay: [{ role: `@${id}`, name: '@er-sys' }],
    });
    const routers = await call('GET', `/identities/${id}/edge-routers`);
    expect(routers.body.data.map((router: { id: string }) => router.id)).toEqual([id]);

    await call('DELETE', `/edge-routers/${id}`);
    expect((await policyOf(id)).status).toBe(404);
    const listed = await call(
      'GET',
      `/edge-router-policies?filter=${encodeURIComponent(`name = "edge-router-${id}-system"`)}`,
    );
    expect(listed.body.data).toEqual([]);
  });

  it('comes and goes as tunneling is turned on and off', async () => {
    const id = await createdId('/edge-routers', { name: 'er-sys-toggle' });

    const before = await policyOf(id);
    await call('PATCH', `/edge-routers/${id}`, { isTunnelerEnabled: true });
    const on = await policyOf(id);
    await call('PATCH', `/edge-routers/${id}`, { name: 'er-sys-toggle-2' });
    const renamed = await policyOf(id);
    await call('PATCH', `/edge-routers/${id}`, { isTunnelerEnabled: false });
    const off = await policyOf(id);

    expect([before.status, on.status, renamed.status, off.status]).toEqual([404, 200, 200, 404]);
    expect(renamed.body.data.identityRolesDisplay).toEqual([{ role: `@${id}`, name: '@er-sys-toggle-2' }]);
  });

  it('cannot be changed or deleted by an admin', async () => {
    const id = await createdId('/edge-routers', { name: 'er-sys-guarded', isTunnelerEnabled: true });

    const put = await call('PUT', `/edge-router-policies/${id}`, { name: 'mine', semantic: 'AllOf' });
    const patch = await call('PATCH', `/edge-router-policies/${id}`, { identityRoles: ['#all'] });
    const deleted = await call('DELETE', `/edge-router-policies/${id}`);

    expect([put.status, patch.status, deleted.status]).toEqual([400, 400, 400]);
    expect([put.body.error.code, patch.body.error.code, deleted.body.error.code]).toEqual([
      'ENTITY_CAN_NOT_BE_UPDATED',
      'ENTITY_CAN_NOT_BE_UPDATED',
      'ENTITY_CAN_NOT_BE_DELETED',
    ]);
    expect((await policyOf(id)).body.data).toMatchObject({
      name: `edge-router-${id}-system`,
      identityRoles: [`@${id}`],
    });
  });
});

describe('edge router lists', () => {
  beforeAll(async () => {
    for (const [name, roleAttributes, cost] of [
      ['list-a', ['red', 'blue'], 10],
      ['list-b', ['red'], 20],
      ['list-c', ['green'], 30],
    ] as const) {
      await createdId('/edge-routers', { name, roleAttributes, cost });
    }
  });
  const list = (query: string) => call('GET', `/edge-routers?${query}`);
  const filter = (text: string) => `filter=${encodeURIComponent(text)}`;

  it('filters, sorts and pages', async () => {
    const filtered = await list(filter('name contains "list-" and cost >= 20 sort by name'));
    const sorted = await list(`${filter('name contains "list-"')}&sort=${encodeURIComponent('cost desc')}`);
    const paged = await list(`${filter('name contains "list-" sort by name')}&limit=1&offset=1`);

    expect(filtered.status).toBe(200);
    expectFitsSpecButFingerprint('GET', '/edge-routers', 200, filtered.body);
    expect(names(filtered)).toEqual(['list-b', 'list-c']);
    expect(names(sorted)).toEqual(['list-c', 'list-b', 'list-a']);
    expect(names(paged)).toEqual(['list-b']);
    expect(paged.body.meta.pagination).toEqual({ limit: 1, offset: 1, totalCount: 3 });
    expect(filtered.body.meta.filterableFields).toEqual(
      expect.arrayContaining(['roleAttributes', 'isTunnelerEnabled']),
    );
  });

  it('filters by role attributes (roleFilter, AllOf and AnyOf)', async () => {
    const anyOf = await list(`roleFilter=%23red&roleFilter=%23green&roleSemantic=AnyOf&${filter('true sort by name')}`);
    const allOf = await list(`roleFilter=%23red&roleFilter=%23blue&roleSemantic=AllOf`);
    const [first] = ids(allOf);
    const byId = await list(`roleFilter=${encodeURIComponent(`@${first}`)}`);

    expect(names(anyOf)).toEqual(['list-a', 'list-b', 'list-c']);
    expect(names(allOf)).toEqual(['list-a']);
    expect(names(byId)).toEqual(['list-a']);
  });

  it('lists the role attributes edge routers hold', async () => {
    const all = await call('GET', '/edge-router-role-attributes');
    const some = await call('GET', `/edge-router-role-attributes?${filter('id contains "re"')}`);

    expect(all.status).toBe(200);
    expect(all.body.data).toEqual(expect.arrayContaining(['blue', 'green', 'red']));
    expectMatchesSpec('management', 'GET', '/edge-router-role-attributes', 200, all.body);
    expect(some.body.data).toEqual(['green', 'red']);
  });

  it('answers 400 for a filter naming an unknown field', async () => {
    const response = await list(filter('nope = 1'));

    expect(response.status).toBe(400);
    expectMatchesSpec('management', 'GET', '/edge-routers', 400, response.body);
  });
});
