import { beforeAll, describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';

let serviceId: string;
let edgeRouterId: string;
let transitRouterId: string;

const { call, createdId } = useAdminController();

beforeAll(async () => {
  serviceId = await createdId('/services', { name: 'term-service' });
  edgeRouterId = await createdId('/edge-routers', { name: 'term-edge' });
  transitRouterId = await createdId('/transit-routers', { name: 'term-transit' });
});

const terminator = (fields: Record<string, unknown> = {}) => ({
  service: serviceId,
  router: edgeRouterId,
  binding: 'transport',
  address: 'tcp:10.0.0.1:8080',
  ...fields,
});

describe('terminators', () => {
  it('creates a terminator and shows its service and router by name', async () => {
    const created = await call(
      'POST',
      '/terminators',
      terminator({ cost: 12, precedence: 'required', identity: 'h1' }),
    );
    const detail = await call('GET', `/terminators/${created.body.data.id}`);

    expect(created.status).toBe(201);
    expectMatchesSpec('management', 'POST', '/terminators', 201, created.body);
    expect(detail.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/terminators/{id}', 200, detail.body);
    expect(detail.body.data).toMatchObject({
      serviceId,
      service: { entity: 'services', id: serviceId, name: 'term-service' },
      routerId: edgeRouterId,
      router: { entity: 'edge-routers', id: edgeRouterId, name: 'term-edge' },
      binding: 'transport',
      address: 'tcp:10.0.0.1:8080',
      identity: 'h1',
      cost: 12,
      dynamicCost: 12,
      precedence: 'required',
    });
  });

  it('takes a transit router too, keeps the hosting secret to itself and defaults cost and precedence', async () => {
    const id = await createdId(
      '/terminators',
      terminator({ router: transitRouterId, identitySecret: Buffer.from('secret').toString('base64') }),
    );

    const detail = (await call('GET', `/terminators/${id}`)).body.data;

    expect(detail).toMatchObject({
      router: { entity: 'routers', id: transitRouterId, name: 'term-transit' },
      cost: 0,
      precedence: 'default',
      identity: '',
    });
    expect(detail).not.toHaveProperty('identitySecret');
  });

  it('replaces, patches (moving to another router) and deletes', async () => {
    const id = await createdId('/terminators', terminator({ cost: 5, tags: { a: 'b' } }));

    const replaced = await call('PUT', `/terminators/${id}`, terminator({ address: 'tcp:10.0.0.2:80' }));
    const afterReplace = (await call('GET', `/terminators/${id}`)).body.data;
    const patched = await call('PATCH', `/terminators/${id}`, { router: transitRouterId, precedence: 'failed' });
    const afterPatch = (await call('GET', `/terminators/${id}`)).body.data;
    const deleted = await call('DELETE', `/terminators/${id}`);

    expect([replaced.status, patched.status, deleted.status]).toEqual([200, 200, 200]);
    expectMatchesSpec('management', 'PUT', '/terminators/{id}', 200, replaced.body);
    expectMatchesSpec('management', 'PATCH', '/terminators/{id}', 200, patched.body);
    expectMatchesSpec('management', 'DELETE', '/terminators/{id}', 200, deleted.body);
    expect(afterReplace).toMatchObject({ address: 'tcp:10.0.0.2:80', cost: 0, tags: {} });
    expect(afterPatch).toMatchObject({
      address: 'tcp:10.0.0.2:80',
      precedence: 'failed',
      router: { entity: 'routers', id: transitRouterId },
    });
    expect((await call('GET', `/terminators/${id}`)).status).toBe(404);
  });

  it.each([
    ['no service', { service: undefined }, 'service'],
    ['no binding', { binding: undefined }, 'binding'],
    ['a service that does not exist', { service: 'no-such-service' }, 'service'],
    ['a router that does not exist', { router: 'no-such-router' }, 'router'],
    ['a cost above 65535', { cost: 65536 }, 'cost'],
    ['an unknown precedence', { precedence: 'first' }, 'precedence'],
    ['a secret that is not base64', { identitySecret: 'not base64!' }, 'identitySecret'],
  ])('answers 400 COULD_NOT_VALIDATE for %s', async (_case, fields, field) => {
    const response = await call('POST', '/terminators', terminator(fields));

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/terminators' });
  });

  it('refuses a patch to a router that does not exist', async () => {
    const id = await createdId('/terminators', terminator());

    const response = await call('PATCH', `/terminators/${id}`, { router: 'gone' });

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('router');
  });

  it('answers 404 for a terminator that does not exist', async () => {
    const detail = await call('GET', '/terminators/nope');
    const deleted = await call('DELETE', '/terminators/nope');

    expect([detail.status, deleted.status]).toEqual([404, 404]);
    expectMatchesSpec('management', 'GET', '/terminators/{id}', 404, detail.body);
    expectMatchesSpec('management', 'DELETE', '/terminators/{id}', 404, deleted.body);
  });
});

describe('terminators go with their service and their router', () => {
  it('are deleted with their edge router, their transit router and their service', async () => {
    const service = await createdId('/services', { name: 'cascade-service' });
    const edge = await createdId('/edge-routers', { name: 'cascade-edge' });
    const transit = await createdId('/routers', { name: 'cascade-transit' });
    const onEdge = await createdId('/terminators', terminator({ service, router: edge }));
    const onTransit = await createdId('/terminators', terminator({ service, router: transit }));
    const onOther = await createdId('/terminators', terminator({ service, router: edgeRouterId }));

    await call('DELETE', `/edge-routers/${edge}`);
    const afterEdge = await Promise.all([onEdge, onTransit, onOther].map((id) => call('GET', `/terminators/${id}`)));
    await call('DELETE', `/routers/${transit}`);
    const afterTransit = await call('GET', `/terminators/${onTransit}`);
    const serviceDeleted = await call('DELETE', `/services/${service}`);
    const afterService = await call('GET', `/terminators/${onOther}`);

    expect(afterEdge.map((response) => response.status)).toEqual([404, 200, 200]);
    expect(afterTransit.status).toBe(404);
    expect(serviceDeleted.status).toBe(200);
    expect(afterService.status).toBe(404);
  });
});

describe('terminators racing the deletion of their service or router', () => {
  it.each([
    ['service', '/services'],
    ['edge router', '/edge-routers'],
    ['transit router', '/transit-routers'],
  ])('never outlive their %s', async (_target, path) => {
    for (let round = 0; round < 12; round++) {
      const service = await createdId('/services', { name: `race-service-${path}-${round}` });
      const router =
        path === '/transit-routers'
          ? await createdId('/transit-routers', { name: `race-transit-${round}` })
          : await createdId('/edge-routers', { name: `race-edge-${path}-${round}` });
      const target = path === '/services' ? service : router;

      const [created, deleted] = await Promise.all([
        call('POST', '/terminators', terminator({ service, router })),
        new Promise((resolve) => setTimeout(resolve, Math.random() * 10)).then(() =>
          call('DELETE', `${path}/${target}`),
        ),
      ]);

      expect(deleted.status).toBe(200);
      expect([201, 400]).toContain(created.status);
      if (created.status === 201) {
        expect((await call('GET', `/terminators/${created.body.data.id}`)).status).toBe(404);
      }
    }
  });
});

describe('terminator lists', () => {
  let listService: string;
  beforeAll(async () => {
    listService = await createdId('/services', { name: 'list-service' });
    for (const [address, cost] of [
      ['tcp:a:1', 30],
      ['tcp:b:1', 10],
      ['tcp:c:1', 20],
    ] as const) {
      await createdId('/terminators', terminator({ service: listService, address, cost }));
    }
  });
  const filter = (text: string) => `filter=${encodeURIComponent(text)}`;
  const addresses = (response: { body: { data: { address: string }[] } }) =>
    response.body.data.map((terminator) => terminator.address);

  it('filters, sorts and pages', async () => {
    const sorted = await call('GET', `/terminators?${filter(`service = "${listService}" sort by cost`)}`);
    const filtered = await call('GET', `/terminators?${filter(`service = "${listService}" and cost >= 20`)}`);
    const paged = await call(
      'GET',
      `/terminators?${filter(`service = "${listService}"`)}&sort=address&limit=1&offset=2`,
    );

    expect(sorted.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/terminators', 200, sorted.body);
    expect(addresses(sorted)).toEqual(['tcp:b:1', 'tcp:c:1', 'tcp:a:1']);
    expect(addresses(filtered).sort()).toEqual(['tcp:a:1', 'tcp:c:1']);
    expect(addresses(paged)).toEqual(['tcp:c:1']);
    expect(paged.body.meta.pagination).toEqual({ limit: 1, offset: 2, totalCount: 3 });
  });

  it("lists a service's terminators, with the list's own filter", async () => {
    const all = await call('GET', `/services/${listService}/terminators`);
    const some = await call('GET', `/services/${listService}/terminators?${filter('cost < 25 sort by cost desc')}`);
    const missing = await call('GET', '/services/nope/terminators');

    expect(all.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/services/{id}/terminators', 200, all.body);
    expect(addresses(all).sort()).toEqual(['tcp:a:1', 'tcp:b:1', 'tcp:c:1']);
    expect(addresses(some)).toEqual(['tcp:c:1', 'tcp:b:1']);
    expect(missing.status).toBe(404);
  });

  it('answers 400 for a filter naming an unknown field', async () => {
    const response = await call('GET', `/terminators?${filter('nope = 1')}`);

    expect(response.status).toBe(400);
    expectMatchesSpec('management', 'GET', '/terminators', 400, response.body);
  });
});
