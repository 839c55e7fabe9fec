import { beforeAll, describe, expect, it } from 'vitest';
import { putRouterConnection } from '#shared/store/router-connections.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { enrollRouter, fingerprintOfCredentials, routerConnectionOf } from '../support/ctrl-router.ts';
import { authPolicyBody } from '../support/management-fixtures.ts';

const { controller, call, createdId, createPolicy, userUnder, login } = useAdminController();

/**
 * Known document defects: an edge router's `fingerprint` is null until it enrolls (the documents type it as a plain
 * string), and `GET /edge-routers/{id}/service-edge-router-policies` is documented as a list of service policies
 * (the reference answers with service edge router policies, as we do).
 */
const DOCUMENT_DEFECTS = [
  /^\/data(\/\d+)?\/fingerprint: must be string/,
  /^\/data\/\d+: must have required property '(type|identityRoles|identityRolesDisplay|postureCheckRoles|postureCheckRolesDisplay)' \[#\/definitions\/servicePolicyDetail/,
];

/** GET a reach list by its document path template, check its shape, and answer the names it lists (sorted). */
async function names(template: string, id: string, query = ''): Promise<string[]> {
  const response = await call('GET', `${template.replace('{id}', id)}${query}`);
  expect(response.status, `${template} ${query}: ${response.text}`).toBe(200);
  expectMatchesSpec('management', 'GET', template, 200, response.body, DOCUMENT_DEFECTS);
  return response.body.data.map((entity: { name: string }) => entity.name).sort();
}

/** The small network every test below reads (see each policy's comment for whom it selects). */
const ids: Record<string, string> = {};

beforeAll(async () => {
  const identity = (name: string, roleAttributes: string[]) =>
    createdId('/identities', { name, type: 'User', isAdmin: false, roleAttributes });
  const service = (name: string, roleAttributes: string[]) => createdId('/services', { name, roleAttributes });
  const router = (name: string, roleAttributes: string[]) => createdId('/edge-routers', { name, roleAttributes });
  [ids.alice, ids.bob, ids.carol, ids.dave] = await Promise.all([
    identity('alice', ['eng', 'web']),
    identity('bob', ['eng']),
    identity('carol', ['ops']),
    identity('dave', []),
  ]);
  [ids.web, ids.db, ids.ops] = await Promise.all([
    service('s-web', ['web']),
    service('s-db', ['db']),
    service('s-ops', ['ops', 'web']),
  ]);
  [ids.east, ids.west, ids.both] = await Promise.all([
    router('er-east', ['east']),
    router('er-west', ['west']),
    router('er-both', ['east', 'west']),
  ]);
  const policy = (path: string, body: Record<string, unknown>) => createdId(path, body);
  [ids.spEng, ids.spCarol, ids.spAllOf, ids.erpEast, ids.erpCarol, ids.serpWeb, ids.serpDb] = await Promise.all([
    // alice and bob may dial s-web and s-ops.
    policy('/service-policies', {
      name: 'sp-dial-eng',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#eng'],
      serviceRoles: ['#web'],
    }),
    // carol may bind s-ops (the only service with both ops and web).
    policy('/service-policies', {
      name: 'sp-bind-carol',
      type: 'Bind',
      semantic: 'AllOf',
      identityRoles: [`@${ids.carol}`],
      serviceRoles: ['#ops', '#web'],
    }),
    // alice (eng and web) may dial s-db, named by id.
    policy('/service-policies', {
      name: 'sp-dial-allof',
      type: 'Dial',
      semantic: 'AllOf',
      identityRoles: ['#eng', '#web'],
      serviceRoles: [`@${ids.db}`],
    }),
    // alice and bob may use er-east and er-both.
    policy('/edge-router-policies', {
      name: 'erp-east',
      semantic: 'AnyOf',
      identityRoles: ['#eng'],
      edgeRouterRoles: ['#east'],
    }),
    // carol may use er-both (east and west).
    policy('/edge-router-policies', {
      name: 'erp-carol',
      semantic: 'AllOf',
      identityRoles: [`@${ids.carol}`],
      edgeRouterRoles: ['#east', '#west'],
    }),
    // s-web and s-ops may go through er-west and er-both.
    policy('/service-edge-router-policies', {
      name: 'serp-web',
      semantic: 'AnyOf',
      serviceRoles: ['#web'],
      edgeRouterRoles: ['#west'],
    }),
    // s-db may go through er-east.
    policy('/service-edge-router-policies', {
      name: 'serp-db',
      semantic: 'AllOf',
      serviceRoles: [`@${ids.db}`],
      edgeRouterRoles: [`@${ids.east}`],
    }),
  ]);
});

describe('what an identity reaches', () => {
  it('lists the services it may dial or bind, narrowed by policyType', async () => {
    const services = (who: string, query = '') => names('/identities/{id}/services', ids[who]!, query);
    expect(await services('alice')).toEqual(['s-db', 's-ops', 's-web']);
    expect(await services('bob')).toEqual(['s-ops', 's-web']);
    expect(await services('carol')).toEqual(['s-ops']);
    expect(await services('dave')).toEqual([]);
    expect(await services('alice', '?policyType=bind')).toEqual([]);
    expect(await services('carol', '?policyType=Bind')).toEqual(['s-ops']);
    expect(await services('carol', '?policyType=dial')).toEqual([]);
  });

  it('lists its service policies, edge routers and edge router policies', async () => {
    expect(await names('/identities/{id}/service-policies', ids.alice!)).toEqual(['sp-dial-allof', 'sp-dial-eng']);
    expect(await names('/identities/{id}/service-policies', ids.carol!)).toEqual(['sp-bind-carol']);
    expect(await names('/identities/{id}/edge-routers', ids.alice!)).toEqual(['er-both', 'er-east']);
    expect(await names('/identities/{id}/edge-routers', ids.carol!)).toEqual(['er-both']);
    expect(await names('/identities/{id}/edge-routers', ids.dave!)).toEqual([]);
    expect(await names('/identities/{id}/edge-router-policies', ids.bob!)).toEqual(['erp-east']);
    expect(await names('/identities/{id}/edge-router-policies', ids.dave!)).toEqual([]);
  });

  it('filters, sorts and pages its services like the service list', async () => {
    const filtered = await names(
      '/identities/{id}/services',
      ids.alice!,
      `?filter=${encodeURIComponent('name contains "s-"')}&sort=name desc&limit=2&offset=1`,
    );
    expect(filtered).toEqual(['s-db', 's-ops']);
    const page = await call('GET', `/identities/${ids.alice}/services?limit=1&offset=1`);
    expect(page.body.data.map((service: { name: string }) => service.name)).toHaveLength(1);
    expect(page.body.meta.pagination).toEqual({ limit: 1, offset: 1, totalCount: 3 });
    expect(page.body.meta.filterableFields).toEqual(expect.arrayContaining(['name', 'roleAttributes']));
    const byAttribute = await names(
      '/identities/{id}/services',
      ids.alice!,
      `?filter=${encodeURIComponent('anyOf(roleAttributes) = "ops"')}`,
    );
    expect(byAttribute).toEqual(['s-ops']);
  });
});

describe('who reaches a service', () => {
  it('lists the identities that may dial or bind it, narrowed by policyType', async () => {
    expect(await names('/services/{id}/identities', ids.web!)).toEqual(['alice', 'bob']);
    expect(await names('/services/{id}/identities', ids.ops!)).toEqual(['alice', 'bob', 'carol']);
    expect(await names('/services/{id}/identities', ids.ops!, '?policyType=bind')).toEqual(['carol']);
    expect(await names('/services/{id}/identities', ids.ops!, '?policyType=dial')).toEqual(['alice', 'bob']);
    expect(await names('/services/{id}/identities', ids.db!)).toEqual(['alice']);
    const paged = await call('GET', `/services/${ids.ops}/identities?limit=2&sort=name`);
    expect(paged.body.data.map((identity: { name: string }) => identity.name)).toEqual(['alice', 'bob']);
    expect(paged.body.meta.pagination).toEqual({ limit: 2, offset: 0, totalCount: 3 });
  });

  it('lists its service policies, edge routers and service edge router policies', async () => {
    expect(await names('/services/{id}/service-policies', ids.ops!)).toEqual(['sp-bind-carol', 'sp-dial-eng']);
    expect(await names('/services/{id}/service-policies', ids.db!)).toEqual(['sp-dial-allof']);
    expect(await names('/services/{id}/edge-routers', ids.web!)).toEqual(['er-both', 'er-west']);
    expect(await names('/services/{id}/edge-routers', ids.db!)).toEqual(['er-east']);
    expect(await names('/services/{id}/service-edge-router-policies', ids.web!)).toEqual(['serp-web']);
    expect(await names('/services/{id}/service-edge-router-policies', ids.db!)).toEqual(['serp-db']);
  });
});

describe('what an edge router carries', () => {
  it('lists the identities and services that may use it, and the policies that select it', async () => {
    expect(await names('/edge-routers/{id}/identities', ids.east!)).toEqual(['alice', 'bob']);
    expect(await names('/edge-routers/{id}/identities', ids.both!)).toEqual(['alice', 'bob', 'carol']);
    expect(await names('/edge-routers/{id}/identities', ids.west!)).toEqual([]);
    expect(await names('/edge-routers/{id}/services', ids.east!)).toEqual(['s-db']);
    expect(await names('/edge-routers/{id}/services', ids.west!)).toEqual(['s-ops', 's-web']);
    expect(await names('/edge-routers/{id}/edge-router-policies', ids.both!)).toEqual(['erp-carol', 'erp-east']);
    expect(await names('/edge-routers/{id}/edge-router-policies', ids.west!)).toEqual([]);
    expect(await names('/edge-routers/{id}/service-edge-router-policies', ids.east!)).toEqual(['serp-db']);
    expect(await names('/edge-routers/{id}/service-edge-router-policies', ids.both!)).toEqual(['serp-web']);
  });
});

describe('policy advice', () => {
  const advice = async (who: string, service: string) => {
    const response = await call('GET', `/identities/${ids[who]}/policy-advice/${ids[service]}`);
    expect(response.status, response.text).toBe(200);
    expectMatchesSpec('management', 'GET', '/identities/{id}/policy-advice/{serviceId}', 200, response.body);
    return response.body.data;
  };

  it('says what the identity may do with the service and through which routers', async () => {
    expect(await advice('alice', 'web')).toEqual({
      identityId: ids.alice,
      identity: {
        entity: 'identities',
        id: ids.alice,
        name: 'alice',
        _links: { self: { href: `./identities/${ids.alice}` } },
      },
      serviceId: ids.web,
      service: { entity: 'services', id: ids.web, name: 's-web', _links: { self: { href: `./services/${ids.web}` } } },
      isDialAllowed: true,
      isBindAllowed: false,
      identityRouterCount: 2,
      serviceRouterCount: 2,
      commonRouters: [
        {
          entity: 'edge-routers',
          id: ids.both,
          name: 'er-both',
          isOnline: false,
          _links: { self: { href: `./edge-routers/${ids.both}` } },
        },
      ],
    });
    // Enrolled, its control channel connected (the connection item the routers' endpoint writes after the hello).
    const credentials = await enrollRouter(controller, call, ids.both!, 'edge-routers');
    const fingerprint = fingerprintOfCredentials(credentials);
    await putRouterConnection(controller().deps.store, 'edge-routers', routerConnectionOf(ids.both!), fingerprint);
    expect((await advice('alice', 'web')).commonRouters).toEqual([expect.objectContaining({ isOnline: true })]);
    expect(await advice('carol', 'ops')).toMatchObject({
      isDialAllowed: false,
      isBindAllowed: true,
      identityRouterCount: 1,
      serviceRouterCount: 2,
      commonRouters: [{ id: ids.both }],
    });
    expect(await advice('dave', 'db')).toMatchObject({
      isDialAllowed: false,
      isBindAllowed: false,
      identityRouterCount: 0,
      serviceRouterCount: 1,
      commonRouters: [],
    });
  });

  it('answers 404 for an unknown identity or service', async () => {
    const unknownIdentity = await call('GET', `/identities/nope/policy-advice/${ids.web}`);
    const unknownService = await call('GET', `/identities/${ids.alice}/policy-advice/nope`);
    for (const response of [unknownIdentity, unknownService]) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
      expectMatchesSpec('management', 'GET', '/identities/{id}/policy-advice/{serviceId}', 404, response.body);
    }
  });
});

describe('as policies and role attributes change', () => {
  it('follows a policy PATCH and an identity role attribute change at once', async () => {
    await call('PATCH', `/service-policies/${ids.spEng}`, { identityRoles: ['#ops'] });
    expect(await names('/services/{id}/identities', ids.web!)).toEqual(['carol']);
    expect(await names('/identities/{id}/services', ids.alice!)).toEqual(['s-db']);
    expect(await names('/identities/{id}/service-policies', ids.carol!)).toEqual(['sp-bind-carol', 'sp-dial-eng']);

    await call('PATCH', `/identities/${ids.dave}`, { roleAttributes: ['ops', 'east'] });
    expect(await names('/identities/{id}/services', ids.dave!)).toEqual(['s-ops', 's-web']);
    expect(await names('/services/{id}/identities', ids.web!)).toEqual(['carol', 'dave']);
    // Edge routers select by their own attributes, not the identity's: dave's "east" grants him no router.
    expect(await names('/identities/{id}/edge-routers', ids.dave!)).toEqual([]);

    await call('PATCH', `/edge-routers/${ids.west}`, { roleAttributes: [] });
    expect(await names('/services/{id}/edge-routers', ids.web!)).toEqual(['er-both']);
    expect(await names('/edge-routers/{id}/services', ids.west!)).toEqual([]);

    await call('DELETE', `/service-policies/${ids.spCarol}`);
    expect(await names('/identities/{id}/services', ids.carol!, '?policyType=bind')).toEqual([]);
  });
});

describe('bad requests', () => {
  const paths = [
    '/identities/{id}/services',
    '/identities/{id}/service-policies',
    '/identities/{id}/edge-routers',
    '/identities/{id}/edge-router-policies',
    '/services/{id}/identities',
    '/services/{id}/service-policies',
    '/services/{id}/edge-routers',
    '/services/{id}/service-edge-router-policies',
    '/edge-routers/{id}/identities',
    '/edge-routers/{id}/services',
    '/edge-routers/{id}/edge-router-policies',
    '/edge-routers/{id}/service-edge-router-policies',
  ];

  it('answers 404 for an unknown entity', async () => {
    // Not every one of these documents its 404; the envelope is the one every 404 has.
    for (const path of paths) {
      const response = await call('GET', path.replace('{id}', 'no-such-id'));
      expect(response.status, path).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
      expectMatchesSpec('management', 'GET', '/identities/{id}', 404, response.body);
    }
  });

  it('answers 400 for a bad policyType or filter, naming it', async () => {
    const type = await call('GET', `/identities/${ids.alice}/services?policyType=host`);
    expect(type.status).toBe(400);
    expect(type.body.error.cause).toMatchObject({ field: 'policyType', value: 'host' });
    const filter = await call('GET', `/services/${ids.web}/identities?filter=${encodeURIComponent('nope = 1')}`);
    expect(filter.status).toBe(400);
    expect(filter.body.error.code).toBe('INVALID_FILTER');
  });

  it('answers 401 without a session and to an identity that is not an admin', async () => {
    const policy = await createPolicy(authPolicyBody('reach-users'));
    const user = await userUnder(policy, 'reach-user');
    const token = (await login(user.username, user.password)).body.data.token as string;
    for (const path of [...paths, `/identities/{id}/policy-advice/${ids.web}`]) {
      const url = path.replace('{id}', ids.alice!);
      expect((await call('GET', url, undefined, token)).status, path).toBe(401);
      expect((await call('GET', url, undefined, '')).status, path).toBe(401);
    }
  });
});

describe('#all policies', () => {
  const isolated = useAdminController();

  it('select every identity, service and edge router, and new ones as they come', async () => {
    const [identity, service, router] = await Promise.all([
      isolated.createdId('/identities', { name: 'all-i1', type: 'User', isAdmin: false }),
      isolated.createdId('/services', { name: 'all-s1' }),
      isolated.createdId('/edge-routers', { name: 'all-r1' }),
    ]);
    await Promise.all([
      isolated.createdId('/service-policies', {
        name: 'sp-all',
        type: 'Dial',
        semantic: 'AllOf',
        identityRoles: ['#all'],
        serviceRoles: ['#all'],
      }),
      isolated.createdId('/edge-router-policies', {
        name: 'erp-all',
        semantic: 'AnyOf',
        identityRoles: ['#all'],
        edgeRouterRoles: ['#all'],
      }),
    ]);
    const list = async (path: string) =>
      (await isolated.call('GET', path)).body.data.map((entity: { name: string }) => entity.name).sort();
    const [service2] = await Promise.all([
      isolated.createdId('/services', { name: 'all-s2' }),
      isolated.createdId('/identities', { name: 'all-i2', type: 'User', isAdmin: false }),
    ]);
    expect(await list(`/identities/${identity}/services`)).toEqual(['all-s1', 'all-s2']);
    expect(await list(`/identities/${identity}/services?policyType=bind`)).toEqual([]);
    const paged = await isolated.call('GET', `/services/${service}/identities?limit=1&offset=2&sort=name`);
    expect(paged.body.data.map((entity: { name: string }) => entity.name)).toEqual(['all-i2']);
    expect(paged.body.meta.pagination).toEqual({ limit: 1, offset: 2, totalCount: 3 });
    expect(await list(`/services/${service2}/identities`)).toEqual(['Default Admin', 'all-i1', 'all-i2']);
    expect(await list(`/identities/${identity}/edge-routers`)).toEqual(['all-r1']);
    expect(await list(`/edge-routers/${router}/identities`)).toEqual(['Default Admin', 'all-i1', 'all-i2']);
    expect(await list(`/services/${service}/edge-routers`)).toEqual([]);
  });
});
