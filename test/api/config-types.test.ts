import { describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';

const { call, createdId } = useAdminController();

const portSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['port'],
  properties: { port: { type: 'integer', minimum: 1, maximum: 65535 } },
};

describe('config types', () => {
  it('starts with the reference built-in config types under their ids', async () => {
    const list = await call('GET', '/config-types?limit=100');
    const intercept = await call('GET', '/config-types/g7cIWbcGg');

    const byName = Object.fromEntries(list.body.data.map((t: { name: string; id: string }) => [t.name, t.id]));
    expect(byName).toMatchObject({
      'intercept.v1': 'g7cIWbcGg',
      'host.v1': 'NH5p4FpGR',
      'host.v2': 'host.v2',
      'ziti-tunneler-client.v1': 'f2dd2df0-9c04-4b84-a91e-71437ac229f1',
      'ziti-tunneler-server.v1': 'cea49285-6c07-42cf-9f52-09a9b115c783',
    });
    expectMatchesSpec('management', 'GET', '/config-types', 200, list.body);
    expect(intercept.body.data).toMatchObject({
      name: 'intercept.v1',
      target: 'service',
      schema: { type: 'object', required: ['protocols', 'addresses', 'portRanges'] },
      _links: { self: { href: './config-types/g7cIWbcGg' }, configs: { href: './config-types/g7cIWbcGg/configs' } },
    });
    expectMatchesSpec('management', 'GET', '/config-types/{id}', 200, intercept.body);
  });

  it('creates, replaces, patches and deletes a config type', async () => {
    const created = await call('POST', '/config-types', { name: 'ct-crud', schema: portSchema, tags: { a: 'b' } });
    const id = created.body.data.id as string;
    const detail = await call('GET', `/config-types/${id}`);

    expect(created.status).toBe(201);
    expectMatchesSpec('management', 'POST', '/config-types', 201, created.body);
    expect(detail.body.data).toMatchObject({
      id,
      name: 'ct-crud',
      schema: portSchema,
      target: 'service',
      tags: { a: 'b' },
    });
    expectMatchesSpec('management', 'GET', '/config-types/{id}', 200, detail.body);

    const replaced = await call('PUT', `/config-types/${id}`, { name: 'ct-crud-2', target: 'router' });
    expectMatchesSpec('management', 'PUT', '/config-types/{id}', 200, replaced.body);
    const afterReplace = (await call('GET', `/config-types/${id}`)).body.data;
    // PUT clears what it does not send; the target stays what create made it.
    expect(afterReplace).toMatchObject({ name: 'ct-crud-2', schema: {}, target: 'service', tags: {} });

    const patched = await call('PATCH', `/config-types/${id}`, { schema: portSchema });
    expectMatchesSpec('management', 'PATCH', '/config-types/{id}', 200, patched.body);
    expect((await call('GET', `/config-types/${id}`)).body.data).toMatchObject({
      name: 'ct-crud-2',
      schema: portSchema,
    });

    const deleted = await call('DELETE', `/config-types/${id}`);
    expect(deleted.status).toBe(200);
    expectMatchesSpec('management', 'DELETE', '/config-types/{id}', 200, deleted.body);
    expect((await call('GET', `/config-types/${id}`)).status).toBe(404);
  });

  it('creates router config types when asked', async () => {
    const id = await createdId('/config-types', { name: 'ct-router', target: 'router', schema: portSchema });

    expect((await call('GET', `/config-types/${id}`)).body.data.target).toBe('router');
  });

  it.each([
    ['no name', { schema: portSchema }, 'name'],
    ['a schema that is not an object', { name: 'ct-bad-1', schema: 'x' }, 'schema'],
    ['a schema whose root is not an object', { name: 'ct-bad-2', schema: { type: 'string' } }, 'schema'],
    [
      'an invalid JSON Schema',
      { name: 'ct-bad-3', schema: { type: 'object', properties: { a: { type: 'nope' } } } },
      'schema',
    ],
    [
      'an unresolvable $ref',
      { name: 'ct-bad-4', schema: { type: 'object', properties: { a: { $ref: '#/nope' } } } },
      'schema',
    ],
    ['an unknown target', { name: 'ct-bad-5', target: 'other-thing' }, 'target'],
    ['an asynchronous schema', { name: 'ct-bad-7', schema: { type: 'object', $async: true } }, 'schema'],
    ['the keyword all as name', { name: 'all' }, 'name'],
    ['tags that are not an object', { name: 'ct-bad-6', tags: [1] }, 'tags'],
  ])('answers 400 naming the field for %s', async (_case, body, field) => {
    const response = await call('POST', '/config-types', body);

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/config-types' });
  });

  it('refuses an invalid schema on update, and a duplicate name', async () => {
    const id = await createdId('/config-types', { name: 'ct-update-bad' });

    const put = await call('PUT', `/config-types/${id}`, { name: 'ct-update-bad', schema: { type: 'array' } });
    const patch = await call('PATCH', `/config-types/${id}`, { schema: { type: 'object', minProperties: -1 } });
    const duplicate = await call('POST', '/config-types', { name: 'ct-update-bad' });

    expect([put.status, patch.status, duplicate.status]).toEqual([400, 400, 400]);
    expect([put.body.error.cause.field, patch.body.error.cause.field, duplicate.body.error.cause.field]).toEqual([
      'schema',
      'schema',
      'name',
    ]);
    expectMatchesSpec('management', 'PUT', '/config-types/{id}', 400, put.body);
    expectMatchesSpec('management', 'PATCH', '/config-types/{id}', 400, patch.body);
  });

  it('accepts 2019-09 and 2020-12 schemas', async () => {
    const defs = { $defs: { port: { type: 'integer', maximum: 10 } }, properties: { port: { $ref: '#/$defs/port' } } };
    const newer = await call('POST', '/config-types', {
      name: 'ct-2020',
      schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', ...defs },
    });
    const older = await call('POST', '/config-types', {
      name: 'ct-2019',
      schema: { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', ...defs },
    });

    expect([newer.status, older.status]).toEqual([201, 201]);
    const config = await call('POST', '/configs', {
      name: 'c-2020',
      configTypeId: newer.body.data.id,
      data: { port: 11 },
    });
    expect(config.status).toBe(400);
    expect(config.body.error.cause.field).toBe('data.port');
  });

  it('answers 404 for an unknown config type', async () => {
    const detail = await call('GET', '/config-types/nope');
    const put = await call('PUT', '/config-types/nope', { name: 'x-404' });
    const patch = await call('PATCH', '/config-types/nope', { name: 'x-404' });
    const del = await call('DELETE', '/config-types/nope');
    const configs = await call('GET', '/config-types/nope/configs');

    expect([detail.status, put.status, patch.status, del.status, configs.status]).toEqual([404, 404, 404, 404, 404]);
    expectMatchesSpec('management', 'GET', '/config-types/{id}', 404, detail.body);
  });

  it('refuses to delete a config type while configs use it, and lists them', async () => {
    const id = await createdId('/config-types', { name: 'ct-in-use', schema: portSchema });
    const configId = await createdId('/configs', { name: 'ct-in-use-config', configTypeId: id, data: { port: 80 } });

    const refused = await call('DELETE', `/config-types/${id}`);
    const configs = await call('GET', `/config-types/${id}/configs`);

    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('CAN_NOT_DELETE_REFERENCED_ENTITY');
    expectMatchesSpec('management', 'DELETE', '/config-types/{id}', 409, refused.body);
    expect(configs.body.data.map((c: { id: string }) => c.id)).toEqual([configId]);
    expect(configs.body.data[0]).toMatchObject({ configTypeId: id, configType: { id, name: 'ct-in-use' } });
    expectMatchesSpec('management', 'GET', '/config-types/{id}/configs', 200, configs.body);

    expect((await call('DELETE', `/configs/${configId}`)).status).toBe(200);
    expect((await call('DELETE', `/config-types/${id}`)).status).toBe(200);
  });

  it('filters, sorts and pages config types', async () => {
    for (const name of ['ct-page-b', 'ct-page-a', 'ct-page-c']) await createdId('/config-types', { name });

    const filtered = await call(
      'GET',
      `/config-types?filter=${encodeURIComponent('name contains "ct-page"')}&sort=name desc`,
    );
    const paged = await call(
      'GET',
      `/config-types?filter=${encodeURIComponent('name contains "ct-page"')}&limit=1&offset=1`,
    );
    const byTarget = await call('GET', `/config-types?filter=${encodeURIComponent('target = "router"')}`);
    const bad = await call('GET', `/config-types?filter=${encodeURIComponent('nope = 1')}`);

    expect(filtered.body.data.map((t: { name: string }) => t.name)).toEqual(['ct-page-c', 'ct-page-b', 'ct-page-a']);
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body.meta.pagination).toMatchObject({ limit: 1, offset: 1, totalCount: 3 });
    expect(byTarget.body.data.every((t: { target: string }) => t.target === 'router')).toBe(true);
    expect(bad.status).toBe(400);
  });
});
