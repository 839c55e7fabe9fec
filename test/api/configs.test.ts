import { describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';

const { call, createdId } = useAdminController();

const INTERCEPT_V1 = 'g7cIWbcGg';
const CLIENT_V1 = 'f2dd2df0-9c04-4b84-a91e-71437ac229f1';
const intercept = (address = 'app.ziti') => ({
  protocols: ['tcp'],
  addresses: [address],
  portRanges: [{ low: 443, high: 443 }],
});

describe('configs', () => {
  it('creates, reads, replaces, patches and deletes a config', async () => {
    const created = await call('POST', '/configs', {
      name: 'cfg-crud',
      configTypeId: INTERCEPT_V1,
      data: intercept(),
      tags: { team: 'a' },
    });
    const id = created.body.data.id as string;
    const detail = await call('GET', `/configs/${id}`);

    expect(created.status).toBe(201);
    expectMatchesSpec('management', 'POST', '/configs', 201, created.body);
    expect(detail.body.data).toMatchObject({
      id,
      name: 'cfg-crud',
      configTypeId: INTERCEPT_V1,
      configType: { entity: 'config-types', id: INTERCEPT_V1, name: 'intercept.v1' },
      data: intercept(),
      tags: { team: 'a' },
    });
    expectMatchesSpec('management', 'GET', '/configs/{id}', 200, detail.body);

    const replaced = await call('PUT', `/configs/${id}`, { name: 'cfg-crud-2', data: intercept('other.ziti') });
    expectMatchesSpec('management', 'PUT', '/configs/{id}', 200, replaced.body);
    expect((await call('GET', `/configs/${id}`)).body.data).toMatchObject({
      name: 'cfg-crud-2',
      data: { addresses: ['other.ziti'] },
      tags: {},
    });

    const patched = await call('PATCH', `/configs/${id}`, { tags: { b: true } });
    expectMatchesSpec('management', 'PATCH', '/configs/{id}', 200, patched.body);
    expect((await call('GET', `/configs/${id}`)).body.data).toMatchObject({
      name: 'cfg-crud-2',
      data: { addresses: ['other.ziti'] },
      tags: { b: true },
    });

    const deleted = await call('DELETE', `/configs/${id}`);
    expectMatchesSpec('management', 'DELETE', '/configs/{id}', 200, deleted.body);
    expect((await call('GET', `/configs/${id}`)).status).toBe(404);
  });

  it('keeps every key of free-form data', async () => {
    const typeId = await createdId('/config-types', { name: 'cfg-free-form' });
    const data = { nested: { deep: [1, 'two', null, { three: true }] }, constructor: 'x', '': 0 };

    const id = await createdId('/configs', { name: 'cfg-free-form', configTypeId: typeId, data });

    expect((await call('GET', `/configs/${id}`)).body.data.data).toEqual(data);
  });

  it.each([
    ['no name', { configTypeId: INTERCEPT_V1, data: intercept() }, 'name'],
    ['no config type', { name: 'cfg-bad-1', data: intercept() }, 'configTypeId'],
    ['an unknown config type', { name: 'cfg-bad-2', configTypeId: 'nope', data: intercept() }, 'configTypeId'],
    ['no data', { name: 'cfg-bad-3', configTypeId: INTERCEPT_V1 }, 'data'],
    ['data that is not an object', { name: 'cfg-bad-4', configTypeId: INTERCEPT_V1, data: [1] }, 'data'],
    ['null data', { name: 'cfg-bad-5', configTypeId: INTERCEPT_V1, data: null }, 'data'],
    [
      'data missing a required property',
      { name: 'cfg-bad-6', configTypeId: CLIENT_V1, data: { hostname: 'h' } },
      'data.port',
    ],
    [
      'data with a value out of range',
      { name: 'cfg-bad-7', configTypeId: CLIENT_V1, data: { hostname: 'h', port: 70000 } },
      'data.port',
    ],
    [
      'data with a property the schema does not allow',
      { name: 'cfg-bad-8', configTypeId: CLIENT_V1, data: { hostname: 'h', port: 1, extra: 1 } },
      'data.extra',
    ],
    [
      'data wrong deep inside',
      { name: 'cfg-bad-9', configTypeId: INTERCEPT_V1, data: { ...intercept(), portRanges: [{ low: 'x', high: 1 }] } },
      'data.portRanges.0.low',
    ],
  ])('answers 400 naming the field for %s', async (_case, body, field) => {
    const response = await call('POST', '/configs', body);

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/configs' });
  });

  it('validates data against the schema on replace and patch too', async () => {
    const id = await createdId('/configs', {
      name: 'cfg-update',
      configTypeId: CLIENT_V1,
      data: { hostname: 'h', port: 1 },
    });

    const put = await call('PUT', `/configs/${id}`, { name: 'cfg-update', data: { hostname: 'h' } });
    const patch = await call('PATCH', `/configs/${id}`, { data: { hostname: 1, port: 1 } });
    const ok = await call('PATCH', `/configs/${id}`, { data: { hostname: 'k', port: 2 } });

    expect([put.status, patch.status, ok.status]).toEqual([400, 400, 200]);
    expect(put.body.error.cause.field).toBe('data.port');
    expect(patch.body.error.cause).toMatchObject({ field: 'data.hostname', value: 1 });
    expectMatchesSpec('management', 'PUT', '/configs/{id}', 400, put.body);
    expect((await call('GET', `/configs/${id}`)).body.data.data).toEqual({ hostname: 'k', port: 2 });
  });

  it('checks data against the schema as last edited', async () => {
    const typeId = await createdId('/config-types', {
      name: 'cfg-edited-type',
      schema: { type: 'object', properties: { size: { type: 'integer', maximum: 5 } } },
    });
    const first = await call('POST', '/configs', { name: 'cfg-edited-1', configTypeId: typeId, data: { size: 9 } });
    await call('PATCH', `/config-types/${typeId}`, {
      schema: { type: 'object', properties: { size: { type: 'integer', maximum: 10 } } },
    });
    const second = await call('POST', '/configs', { name: 'cfg-edited-2', configTypeId: typeId, data: { size: 9 } });

    expect([first.status, second.status]).toEqual([400, 201]);
  });

  it('refuses a duplicate name', async () => {
    await createdId('/configs', { name: 'cfg-twice', configTypeId: CLIENT_V1, data: { hostname: 'h', port: 1 } });

    const response = await call('POST', '/configs', {
      name: 'cfg-twice',
      configTypeId: CLIENT_V1,
      data: { hostname: 'h', port: 1 },
    });

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('name');
  });

  it('answers 404 for an unknown config', async () => {
    const responses = await Promise.all([
      call('GET', '/configs/nope'),
      call('PUT', '/configs/nope', { name: 'x', data: {} }),
      call('PATCH', '/configs/nope', { name: 'x' }),
      call('DELETE', '/configs/nope'),
      call('GET', '/configs/nope/services'),
    ]);

    expect(responses.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    expectMatchesSpec('management', 'GET', '/configs/{id}', 404, responses[0]!.body);
  });

  it('refuses to delete a config a service uses, and lists the services using it', async () => {
    const configId = await createdId('/configs', {
      name: 'cfg-used',
      configTypeId: CLIENT_V1,
      data: { hostname: 'h', port: 1 },
    });
    const serviceId = await createdId('/services', {
      name: 'cfg-used-service',
      encryptionRequired: true,
      configs: [configId],
    });

    const refused = await call('DELETE', `/configs/${configId}`);
    const services = await call('GET', `/configs/${configId}/services`);

    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CAN_NOT_DELETE_REFERENCED_ENTITY');
    expectMatchesSpec('management', 'DELETE', '/configs/{id}', 409, refused.body);
    expect(services.body.data.map((s: { id: string }) => s.id)).toEqual([serviceId]);
    expectMatchesSpec('management', 'GET', '/configs/{id}/services', 200, services.body);

    await call('PATCH', `/services/${serviceId}`, { configs: [] });
    expect((await call('GET', `/configs/${configId}/services`)).body.data).toEqual([]);
    expect((await call('DELETE', `/configs/${configId}`)).status).toBe(200);
  });

  it('filters, sorts and pages configs', async () => {
    for (const name of ['cfg-page-b', 'cfg-page-a', 'cfg-page-c']) {
      await createdId('/configs', { name, configTypeId: CLIENT_V1, data: { hostname: name, port: 1 } });
    }
    const filter = encodeURIComponent(`name contains "cfg-page" and configTypeId = "${CLIENT_V1}"`);

    const sorted = await call('GET', `/configs?filter=${filter}&sort=name desc`);
    const paged = await call('GET', `/configs?filter=${filter}&limit=2&offset=2`);
    const byName = await call('GET', `/configs?sort=name&limit=500`);

    expect(sorted.body.data.map((c: { name: string }) => c.name)).toEqual(['cfg-page-c', 'cfg-page-b', 'cfg-page-a']);
    expectMatchesSpec('management', 'GET', '/configs', 200, sorted.body);
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body.meta.pagination).toMatchObject({ limit: 2, offset: 2, totalCount: 3 });
    const names = byName.body.data.map((c: { name: string }) => c.name);
    expect(names).toEqual([...names].sort());
  });
});
