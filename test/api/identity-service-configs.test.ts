import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_SERVICE_CONFIG_PAIRS } from '#functions/identities/identity-service-configs.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { M } from '../support/management-fixtures.ts';

const { call, createdId, controller, admin } = useAdminController();

const ids: Record<string, string> = {};

beforeAll(async () => {
  [ids.typeA, ids.typeB, ids.routerType] = await Promise.all([
    createdId('/config-types', { name: 'isc-type-a' }),
    createdId('/config-types', { name: 'isc-type-b' }),
    createdId('/config-types', { name: 'isc-router-type', target: 'router' }),
  ]);
  [ids.a1, ids.a2, ids.b1, ids.routerConfig] = await Promise.all([
    createdId('/configs', { name: 'isc-a1', configTypeId: ids.typeA, data: { n: 1 } }),
    createdId('/configs', { name: 'isc-a2', configTypeId: ids.typeA, data: { n: 2 } }),
    createdId('/configs', { name: 'isc-b1', configTypeId: ids.typeB, data: { n: 3 } }),
    createdId('/configs', { name: 'isc-router', configTypeId: ids.routerType, data: {} }),
  ]);
  [ids.web, ids.db] = await Promise.all([
    createdId('/services', { name: 'isc-web' }),
    createdId('/services', { name: 'isc-db' }),
  ]);
});

const newIdentity = (name: string) => createdId('/identities', { name, type: 'User', isAdmin: false });

/** The identity's overrides as `service:config` names, sorted, checked against the document. */
async function overrides(identityId: string): Promise<string[]> {
  const response = await call('GET', `/identities/${identityId}/service-configs`);
  expect(response.status, response.text).toBe(200);
  expectMatchesSpec('management', 'GET', '/identities/{id}/service-configs', 200, response.body);
  return response.body.data
    .map(
      (entry: { service: { name: string }; config: { name: string } }) => `${entry.service.name}:${entry.config.name}`,
    )
    .sort();
}

const associate = (identityId: string, body: unknown) =>
  call('POST', `/identities/${identityId}/service-configs`, body);
const disassociate = (identityId: string, body?: unknown, token = admin()) =>
  controller().call('DELETE', `${M}/identities/${identityId}/service-configs`, {
    token,
    ...(body === undefined ? {} : { body }),
  });

describe('identity service configs', () => {
  it('associates configs per service, one per config type, and lists them', async () => {
    const id = await newIdentity('isc-alice');
    expect(await overrides(id)).toEqual([]);

    const associated = await associate(id, [
      { serviceId: ids.web, configId: ids.a1 },
      { serviceId: ids.web, configId: ids.b1 },
      { serviceId: ids.db, configId: ids.a1 },
    ]);
    expect(associated.status, associated.text).toBe(200);
    expectMatchesSpec('management', 'POST', '/identities/{id}/service-configs', 200, associated.body);
    expect(await overrides(id)).toEqual(['isc-db:isc-a1', 'isc-web:isc-a1', 'isc-web:isc-b1']);

    const listed = await call('GET', `/identities/${id}/service-configs`);
    expect(listed.body.data).toContainEqual({
      serviceId: ids.web,
      service: {
        entity: 'services',
        id: ids.web,
        name: 'isc-web',
        _links: { self: { href: `./services/${ids.web}` } },
      },
      configId: ids.b1,
      config: { entity: 'configs', id: ids.b1, name: 'isc-b1', _links: { self: { href: `./configs/${ids.b1}` } } },
    });
  });

  it('replaces the override of a config type the identity already has for that service', async () => {
    const id = await newIdentity('isc-bob');
    await associate(id, [{ serviceId: ids.web, configId: ids.a1 }]);
    await associate(id, [{ serviceId: ids.web, configId: ids.a2 }]);
    expect(await overrides(id)).toEqual(['isc-web:isc-a2']);
    // The config it no longer uses can be deleted; the one it uses cannot.
    const inUse = await call('DELETE', `/configs/${ids.a2}`);
    expect(inUse.status).toBe(409);
    // Associating the same pair again changes nothing.
    expect((await associate(id, [{ serviceId: ids.web, configId: ids.a2 }])).status).toBe(200);
    expect(await overrides(id)).toEqual(['isc-web:isc-a2']);
  });

  it('removes the pairs named, or all of them without a body', async () => {
    const id = await newIdentity('isc-carol');
    await associate(id, [
      { serviceId: ids.web, configId: ids.a1 },
      { serviceId: ids.web, configId: ids.b1 },
      { serviceId: ids.db, configId: ids.b1 },
    ]);

    const removed = await disassociate(id, [
      { serviceId: ids.web, configId: ids.b1 },
      // Not an override of this identity: nothing to remove.
      { serviceId: ids.db, configId: ids.a1 },
    ]);
    expect(removed.status, removed.text).toBe(200);
    expectMatchesSpec('management', 'DELETE', '/identities/{id}/service-configs', 200, removed.body);
    expect(await overrides(id)).toEqual(['isc-db:isc-b1', 'isc-web:isc-a1']);

    expect((await disassociate(id)).status).toBe(200);
    expect(await overrides(id)).toEqual([]);
  });

  it('removes more overrides than one transaction holds when all go at once', async () => {
    const id = await newIdentity('isc-many');
    const serviceIds = await Promise.all(
      Array.from({ length: 20 }, (_, n) => createdId('/services', { name: `isc-many-${n}` })),
    );
    // The largest request: as many pairs as one takes, each with its own service and config.
    const configIds = await Promise.all(
      Array.from({ length: MAX_SERVICE_CONFIG_PAIRS }, (_, n) =>
        createdId('/configs', { name: `isc-many-config-${n}`, configTypeId: ids.typeB, data: {} }),
      ),
    );
    const widest = configIds.map((configId, n) => ({ serviceId: serviceIds[n]!, configId }));
    const associated = await associate(id, widest);
    expect(associated.status, associated.text).toBe(200);
    const rest = serviceIds.map((serviceId) => ({ serviceId, configId: ids.a1 }));
    for (let start = 0; start < rest.length; start += 10) {
      expect((await associate(id, rest.slice(start, start + 10))).status).toBe(200);
    }
    expect(await overrides(id)).toHaveLength(20 + MAX_SERVICE_CONFIG_PAIRS);
    expect((await disassociate(id, [])).status).toBe(200);
    expect(await overrides(id)).toEqual([]);
  });

  it('goes with its identity and with its service', async () => {
    const id = await newIdentity('isc-dave');
    const service = await createdId('/services', { name: 'isc-short-lived' });
    await associate(id, [
      { serviceId: service, configId: ids.a1 },
      { serviceId: ids.web, configId: ids.b1 },
    ]);
    expect((await call('DELETE', `/services/${service}`)).status).toBe(200);
    expect(await overrides(id)).toEqual(['isc-web:isc-b1']);
    expect((await call('DELETE', `/identities/${id}`)).status).toBe(200);
    // Nothing holds the config any more: it can be deleted.
    const config = await createdId('/configs', { name: 'isc-free', configTypeId: ids.typeB, data: {} });
    const other = await newIdentity('isc-erin');
    await associate(other, [{ serviceId: ids.db, configId: config }]);
    await call('DELETE', `/identities/${other}`);
    expect((await call('DELETE', `/configs/${config}`)).status).toBe(200);
  });
});

describe('bad input', () => {
  it('refuses unknown services and configs, router configs, two configs of one type, and writes nothing', async () => {
    const id = await newIdentity('isc-bad');
    const cases: [unknown, string][] = [
      [[{ serviceId: 'nope', configId: ids.a1 }], 'serviceId'],
      [[{ serviceId: ids.web, configId: 'nope' }], 'configId'],
      [[{ serviceId: ids.web, configId: ids.routerConfig }], 'configId'],
      [
        [
          { serviceId: ids.web, configId: ids.a1 },
          { serviceId: ids.web, configId: ids.a2 },
        ],
        'configId',
      ],
      [[{ serviceId: ids.web }], '0.configId'],
      [[{ serviceId: ids.web, configId: ids.a1, extra: 1 }], '0.extra'],
      [{ serviceId: ids.web, configId: ids.a1 }, '(root)'],
      [undefined, '(root)'],
      [
        Array.from({ length: MAX_SERVICE_CONFIG_PAIRS + 1 }, () => ({ serviceId: ids.web, configId: ids.a1 })),
        '(root)',
      ],
    ];
    for (const [body, field] of cases) {
      const response = await associate(id, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('COULD_NOT_VALIDATE');
      expect(response.body.error.cause.field, JSON.stringify(body)).toBe(field);
    }
    expect(await overrides(id)).toEqual([]);
    const badRemove = await disassociate(id, [{ serviceId: 3 }]);
    expect(badRemove.status).toBe(400);
  });

  it('answers 404 for an unknown identity and 401 without a session', async () => {
    for (const [method, body] of [
      ['GET', undefined],
      ['POST', [{ serviceId: ids.web, configId: ids.a1 }]],
      ['DELETE', undefined],
    ] as const) {
      const missing = await call(method, '/identities/nope/service-configs', body);
      expect(missing.status, method).toBe(404);
      expectMatchesSpec('management', method, '/identities/{id}/service-configs', 404, missing.body);
      const anonymous = await call(method, '/identities/nope/service-configs', body, '');
      expect(anonymous.status, method).toBe(401);
    }
  });
});
