import { beforeAll, describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';

const { call, createdId } = useAdminController();

/** An edge router's `fingerprint` is null until it enrolls; the documents type it as a plain string. */
const FINGERPRINT = [/^\/data(\/\d+)?\/fingerprint: must be string/];

/** GET a policy's member list by its document path template, check its shape, answer the names (sorted). */
async function members(template: string, id: string, query = ''): Promise<string[]> {
  const response = await call('GET', `${template.replace('{id}', id)}${query}`);
  expect(response.status, `${template} ${query}: ${response.text}`).toBe(200);
  expectMatchesSpec('management', 'GET', template, 200, response.body, FINGERPRINT);
  return response.body.data.map((entity: { name: string }) => entity.name).sort();
}

const ids: Record<string, string> = {};

beforeAll(async () => {
  const identity = (name: string, roleAttributes: string[]) =>
    createdId('/identities', { name, type: 'User', isAdmin: false, roleAttributes });
  [ids.ann, ids.ben, ids.cat] = await Promise.all([
    identity('pl-ann', ['eng', 'web']),
    identity('pl-ben', ['eng']),
    identity('pl-cat', ['ops']),
  ]);
  [ids.web, ids.db] = await Promise.all([
    createdId('/services', { name: 'pl-web', roleAttributes: ['web'] }),
    createdId('/services', { name: 'pl-db', roleAttributes: ['db'] }),
  ]);
  [ids.east, ids.west] = await Promise.all([
    createdId('/edge-routers', { name: 'pl-east', roleAttributes: ['east'] }),
    createdId('/edge-routers', { name: 'pl-west', roleAttributes: ['west'] }),
  ]);
  [ids.domain, ids.mac] = await Promise.all([
    createdId('/posture-checks', {
      name: 'pl-domain',
      typeId: 'DOMAIN',
      domains: ['corp.example.com'],
      roleAttributes: ['strict'],
    }),
    createdId('/posture-checks', { name: 'pl-mac', typeId: 'MAC', macAddresses: ['00:1A:2B:3C:4D:5E'] }),
  ]);
});

describe('service policy members', () => {
  it('lists the identities, services and posture checks each role field selects', async () => {
    const anyOf = await createdId('/service-policies', {
      name: 'pl-sp-anyof',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#web', '#ops'],
      serviceRoles: [`@${ids.db}`, '#web'],
      postureCheckRoles: ['#strict', `@${ids.mac}`],
    });
    const allOf = await createdId('/service-policies', {
      name: 'pl-sp-allof',
      type: 'Bind',
      semantic: 'AllOf',
      identityRoles: ['#eng', '#web', `@${ids.cat}`],
      serviceRoles: ['#web', '#db'],
    });

    expect(await members('/service-policies/{id}/identities', anyOf)).toEqual(['pl-ann', 'pl-cat']);
    expect(await members('/service-policies/{id}/services', anyOf)).toEqual(['pl-db', 'pl-web']);
    expect(await members('/service-policies/{id}/posture-checks', anyOf)).toEqual(['pl-domain', 'pl-mac']);
    // AllOf needs every attribute; an @id counts whatever the semantic.
    expect(await members('/service-policies/{id}/identities', allOf)).toEqual(['pl-ann', 'pl-cat']);
    expect(await members('/service-policies/{id}/services', allOf)).toEqual([]);
    expect(await members('/service-policies/{id}/posture-checks', allOf)).toEqual([]);
  });

  it('follows a PATCH of the policy and a change of an identity role attributes', async () => {
    const id = await createdId('/service-policies', {
      name: 'pl-sp-moving',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#eng'],
    });
    expect(await members('/service-policies/{id}/identities', id)).toEqual(['pl-ann', 'pl-ben']);

    await call('PATCH', `/service-policies/${id}`, { identityRoles: ['#ops'] });
    expect(await members('/service-policies/{id}/identities', id)).toEqual(['pl-cat']);

    await call('PATCH', `/identities/${ids.ben}`, { roleAttributes: ['ops'] });
    expect(await members('/service-policies/{id}/identities', id)).toEqual(['pl-ben', 'pl-cat']);
    await call('PATCH', `/identities/${ids.ben}`, { roleAttributes: ['eng'] });
    expect(await members('/service-policies/{id}/identities', id)).toEqual(['pl-cat']);
  });

  it('with #all lists every identity, paged from the type itself', async () => {
    const id = await createdId('/service-policies', {
      name: 'pl-sp-all',
      type: 'Dial',
      semantic: 'AllOf',
      identityRoles: ['#all'],
    });
    const everyone = await call('GET', '/identities?limit=500');
    const listed = await call('GET', `/service-policies/${id}/identities?limit=2&offset=1`);
    expect(listed.body.meta.pagination).toEqual({
      limit: 2,
      offset: 1,
      totalCount: everyone.body.meta.pagination.totalCount,
    });
    expect(listed.body.data.map((identity: { id: string }) => identity.id)).toEqual(
      everyone.body.data.slice(1, 3).map((identity: { id: string }) => identity.id),
    );
    expect(
      await members('/service-policies/{id}/identities', id, `?filter=${encodeURIComponent('name contains "pl-"')}`),
    ).toEqual(['pl-ann', 'pl-ben', 'pl-cat']);
  });
});

describe('edge router policy and service edge router policy members', () => {
  it('lists the edge routers, identities and services each selects', async () => {
    const erp = await createdId('/edge-router-policies', {
      name: 'pl-erp',
      semantic: 'AnyOf',
      identityRoles: [`@${ids.ben}`],
      edgeRouterRoles: ['#east', '#west'],
    });
    const serp = await createdId('/service-edge-router-policies', {
      name: 'pl-serp',
      semantic: 'AllOf',
      serviceRoles: ['#web'],
      edgeRouterRoles: ['#east', '#west'],
    });

    expect(await members('/edge-router-policies/{id}/edge-routers', erp)).toEqual(['pl-east', 'pl-west']);
    expect(await members('/edge-router-policies/{id}/identities', erp)).toEqual(['pl-ben']);
    expect(await members('/service-edge-router-policies/{id}/edge-routers', serp)).toEqual([]);
    expect(await members('/service-edge-router-policies/{id}/services', serp)).toEqual(['pl-web']);

    await call('PATCH', `/edge-routers/${ids.west}`, { roleAttributes: ['east', 'west'] });
    expect(await members('/service-edge-router-policies/{id}/edge-routers', serp)).toEqual(['pl-west']);
  });

  it('pages and filters', async () => {
    const erp = await createdId('/edge-router-policies', {
      name: 'pl-erp-paged',
      semantic: 'AnyOf',
      identityRoles: ['#eng', '#ops'],
    });
    const page = await call('GET', `/edge-router-policies/${erp}/identities?sort=name desc&limit=2`);
    expect(page.body.data.map((identity: { name: string }) => identity.name)).toEqual(['pl-cat', 'pl-ben']);
    expect(page.body.meta.pagination).toEqual({ limit: 2, offset: 0, totalCount: 3 });
    const filtered = await members(
      '/edge-router-policies/{id}/identities',
      erp,
      `?filter=${encodeURIComponent('name = "pl-ann"')}`,
    );
    expect(filtered).toEqual(['pl-ann']);
  });
});

describe('bad requests', () => {
  const paths = [
    '/service-policies/{id}/identities',
    '/service-policies/{id}/services',
    '/service-policies/{id}/posture-checks',
    '/edge-router-policies/{id}/edge-routers',
    '/edge-router-policies/{id}/identities',
    '/service-edge-router-policies/{id}/edge-routers',
    '/service-edge-router-policies/{id}/services',
  ];

  it('answers 404 for an unknown policy, 400 for a bad filter', async () => {
    for (const path of paths) {
      const response = await call('GET', path.replace('{id}', 'no-such-policy'));
      expect(response.status, path).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
    const policy = await createdId('/edge-router-policies', { name: 'pl-erp-bad', semantic: 'AnyOf' });
    const bad = await call('GET', `/edge-router-policies/${policy}/identities?filter=${encodeURIComponent('name ==')}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_FILTER');
  });

  it('answers 401 without a session', async () => {
    for (const path of paths) {
      const response = await call('GET', path.replace('{id}', 'x'), undefined, '');
      expect(response.status, path).toBe(401);
    }
  });
});
