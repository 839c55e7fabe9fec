import { describe, expect, it } from 'vitest';
import { expectMatchesSpec, specMismatches } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';
import { M } from '../support/management-fixtures.ts';

const { controller, call, createdId } = useAdminController();

const INTERCEPT_V1 = 'g7cIWbcGg';
const HOST_V1 = 'NH5p4FpGR';
const interceptData = { protocols: ['tcp'], addresses: ['svc.ziti'], portRanges: [{ low: 80, high: 80 }] };
const hostData = { protocol: 'tcp', address: 'localhost', port: 8080 };

const interceptConfig = (name: string) =>
  createdId('/configs', { name, configTypeId: INTERCEPT_V1, data: interceptData });
const hostConfig = (name: string) => createdId('/configs', { name, configTypeId: HOST_V1, data: hostData });

describe('services', () => {
  it('creates a service with defaults, reads, replaces, patches and deletes it', async () => {
    const created = await call('POST', '/services', { name: 'svc-crud', encryptionRequired: false });
    const id = created.body.data.id as string;
    const detail = await call('GET', `/services/${id}`);

    expect(created.status).toBe(201);
    expectMatchesSpec('management', 'POST', '/services', 201, created.body);
    expect(detail.body.data).toMatchObject({
      id,
      name: 'svc-crud',
      encryptionRequired: false,
      terminatorStrategy: 'smartrouting',
      maxIdleTimeMillis: 0,
      roleAttributes: [],
      configs: [],
      config: {},
      tags: {},
      _links: { self: { href: `./services/${id}` }, configs: { href: `./services/${id}/configs` } },
    });
    expectMatchesSpec('management', 'GET', '/services/{id}', 200, detail.body);

    const replaced = await call('PUT', `/services/${id}`, {
      name: 'svc-crud-2',
      encryptionRequired: true,
      terminatorStrategy: 'weighted',
      maxIdleTimeMillis: 5000,
      roleAttributes: ['web'],
    });
    expectMatchesSpec('management', 'PUT', '/services/{id}', 200, replaced.body);
    // encryptionRequired is set at create and never changes.
    expect((await call('GET', `/services/${id}`)).body.data).toMatchObject({
      name: 'svc-crud-2',
      encryptionRequired: false,
      terminatorStrategy: 'weighted',
      maxIdleTimeMillis: 5000,
      roleAttributes: ['web'],
    });

    const patched = await call('PATCH', `/services/${id}`, { encryptionRequired: true, tags: { a: 'b' } });
    expectMatchesSpec('management', 'PATCH', '/services/{id}', 200, patched.body);
    expect((await call('GET', `/services/${id}`)).body.data).toMatchObject({
      name: 'svc-crud-2',
      encryptionRequired: false,
      terminatorStrategy: 'weighted',
      roleAttributes: ['web'],
      tags: { a: 'b' },
    });

    const deleted = await call('DELETE', `/services/${id}`);
    expectMatchesSpec('management', 'DELETE', '/services/{id}', 200, deleted.body);
    expect((await call('GET', `/services/${id}`)).status).toBe(404);
  });

  it('requires encryption unless told otherwise', async () => {
    const id = await createdId('/services', { name: 'svc-default-encryption' });

    expect((await call('GET', `/services/${id}`)).body.data.encryptionRequired).toBe(true);
  });

  it.each([
    ['no name', { encryptionRequired: true }, 'name'],
    ['a non-boolean encryptionRequired', { name: 'svc-bad-1', encryptionRequired: 'yes' }, 'encryptionRequired'],
    ['an unknown terminator strategy', { name: 'svc-bad-2', terminatorStrategy: 'fastest' }, 'terminatorStrategy'],
    ['a negative idle time', { name: 'svc-bad-3', maxIdleTimeMillis: -1 }, 'maxIdleTimeMillis'],
    ['a role attribute that is a role', { name: 'svc-bad-4', roleAttributes: ['#web'] }, 'roleAttributes.0'],
    ['configs that are not a list', { name: 'svc-bad-5', configs: 'x' }, 'configs'],
    ['an unknown config', { name: 'svc-bad-6', configs: ['nope'] }, 'configs'],
  ])('answers 400 naming the field for %s', async (_case, body, field) => {
    const response = await call('POST', '/services', body);

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/services' });
  });

  it('allows at most one config per config type', async () => {
    const first = await interceptConfig('svc-one-per-type-1');
    const second = await interceptConfig('svc-one-per-type-2');

    const created = await call('POST', '/services', { name: 'svc-one-per-type', configs: [first, second] });
    const twice = await call('POST', '/services', { name: 'svc-one-per-type', configs: [first, first] });
    const id = await createdId('/services', { name: 'svc-one-per-type', configs: [first] });
    const patched = await call('PATCH', `/services/${id}`, { configs: [first, second] });

    expect([created.status, twice.status, patched.status]).toEqual([400, 400, 400]);
    expect(created.body.error.cause.field).toBe('configs');
    expect(twice.body.error.cause.field).toBe('configs');
    expect(patched.body.error.cause.field).toBe('configs');
  });

  it('refuses configs whose type does not target services', async () => {
    const typeId = await createdId('/config-types', { name: 'svc-router-type', target: 'router' });
    const configId = await createdId('/configs', { name: 'svc-router-config', configTypeId: typeId, data: {} });

    const response = await call('POST', '/services', { name: 'svc-router-configs', configs: [configId] });

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('configs');
  });

  it('lists its configs, and shows config data for the config types asked for', async () => {
    const interceptId = await interceptConfig('svc-configs-intercept');
    const hostId = await hostConfig('svc-configs-host');
    const id = await createdId('/services', { name: 'svc-configs', configs: [interceptId, hostId] });

    const configs = await call('GET', `/services/${id}/configs`);
    const filter = encodeURIComponent('name = "svc-configs"');
    const byName = await call('GET', `/services?filter=${filter}&configTypes=intercept.v1`);
    const byId = await call('GET', `/services?filter=${filter}&configTypes=${HOST_V1},nope`);
    const all = await call('GET', `/services?filter=${filter}&configTypes=all`);
    const none = await call('GET', `/services?filter=${filter}`);

    expect(configs.body.data.map((c: { id: string }) => c.id).sort()).toEqual([interceptId, hostId].sort());
    expectMatchesSpec('management', 'GET', '/services/{id}/configs', 200, configs.body);
    expect(byName.body.data[0].config).toEqual({ 'intercept.v1': interceptData });
    // The document types each value inside a config's data as an object; data holds any JSON (arrays here).
    const mismatches = specMismatches('management', 'GET', '/services', 200, byName.body);
    expect(mismatches.filter((m) => !m.endsWith('/config/additionalProperties/additionalProperties/type]'))).toEqual(
      [],
    );
    expect(byId.body.data[0].config).toEqual({ 'host.v1': hostData });
    expect(all.body.data[0].config).toEqual({ 'intercept.v1': interceptData, 'host.v1': hostData });
    expect(none.body.data[0].config).toEqual({});
  });

  it('shows the config types the API session asked for at login', async () => {
    const interceptId = await interceptConfig('svc-session-intercept');
    await createdId('/services', { name: 'svc-session', configs: [interceptId] });
    const login = await controller().call('POST', `${M}/authenticate?method=password`, {
      body: { username: 'admin', password: 'admin-password-for-tests', configTypes: ['intercept.v1'] },
    });
    const token = login.headers['zt-session'] ?? login.body.data.token;

    const response = await call(
      'GET',
      `/services?filter=${encodeURIComponent('name = "svc-session"')}`,
      undefined,
      token,
    );

    expect(response.body.data[0].config).toEqual({ 'intercept.v1': interceptData });
  });

  it('refuses a duplicate name', async () => {
    await createdId('/services', { name: 'svc-twice' });

    const response = await call('POST', '/services', { name: 'svc-twice' });

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('name');
  });

  it('answers 404 for an unknown service', async () => {
    const responses = await Promise.all([
      call('GET', '/services/nope'),
      call('PUT', '/services/nope', { name: 'x' }),
      call('PATCH', '/services/nope', { name: 'x' }),
      call('DELETE', '/services/nope'),
      call('GET', '/services/nope/configs'),
    ]);

    expect(responses.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    expectMatchesSpec('management', 'GET', '/services/{id}', 404, responses[0]!.body);
  });

  it('filters by role attributes, sorts and pages', async () => {
    const a = await createdId('/services', { name: 'svc-role-a', roleAttributes: ['sales', 'eu'] });
    const b = await createdId('/services', { name: 'svc-role-b', roleAttributes: ['sales'] });
    const c = await createdId('/services', { name: 'svc-role-c', roleAttributes: ['eu'] });

    const allOf = await call('GET', '/services?roleFilter=%23sales&roleFilter=%23eu&roleSemantic=AllOf');
    const anyOf = await call('GET', '/services?roleFilter=%23sales&roleFilter=%23eu&roleSemantic=AnyOf&sort=name desc');
    const byId = await call('GET', `/services?roleFilter=%40${c}`);
    const paged = await call(
      'GET',
      `/services?filter=${encodeURIComponent('name contains "svc-role"')}&limit=1&offset=1&sort=name`,
    );
    const attributes = await call('GET', '/service-role-attributes');

    expect(allOf.body.data.map((s: { id: string }) => s.id)).toEqual([a]);
    expect(anyOf.body.data.map((s: { name: string }) => s.name)).toEqual(['svc-role-c', 'svc-role-b', 'svc-role-a']);
    expect(byId.body.data.map((s: { id: string }) => s.id)).toEqual([c]);
    expect(paged.body.data.map((s: { id: string }) => s.id)).toEqual([b]);
    expect(paged.body.meta.pagination).toMatchObject({ limit: 1, offset: 1, totalCount: 3 });
    expect(attributes.body.data).toEqual(expect.arrayContaining(['eu', 'sales']));
    expectMatchesSpec('management', 'GET', '/service-role-attributes', 200, attributes.body);
  });

  it('counts config types, configs and services in the summary', async () => {
    const summary = await call('GET', '/summary');

    expect(summary.body.data.configTypes).toBeGreaterThanOrEqual(5);
    expect(summary.body.data.configs).toBeGreaterThanOrEqual(1);
    expect(summary.body.data.services).toBeGreaterThanOrEqual(1);
  });
});
