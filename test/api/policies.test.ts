import { describe, expect, it } from 'vitest';
import { SERVICE_POLICY } from '#shared/policy/access.ts';
import { policiesSelecting } from '#shared/policy/reach.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { integrityRun } from '../support/integrity.ts';

const { controller, call, createdId } = useAdminController();

const identity = (name: string, roleAttributes: string[] = []) =>
  createdId('/identities', { name, type: 'User', isAdmin: false, roleAttributes });
const servicePolicy = (body: Record<string, unknown>) =>
  call('POST', '/service-policies', { semantic: 'AnyOf', type: 'Dial', ...body });

/** The ids of the service policies that select an identity, from the selection items alone. */
async function policiesOfIdentity(id: string, attributes: string[]): Promise<string[]> {
  const records = await policiesSelecting(controller().deps.store, SERVICE_POLICY, 'identities', { id, attributes });
  return records.map((record) => record.id);
}

describe('service policies', () => {
  it('creates, reads, replaces, patches and deletes a policy, with display arrays naming @id entities', async () => {
    const alice = await identity('sp-crud-alice');
    const created = await servicePolicy({
      name: 'sp-crud',
      semantic: 'allof',
      identityRoles: [`@${alice}`, '#eng'],
      serviceRoles: ['#all'],
    });
    expect(created.status).toBe(201);
    expectMatchesSpec('management', 'POST', '/service-policies', 201, created.body);
    const id = created.body.data.id as string;

    const detail = await call('GET', `/service-policies/${id}`);
    expectMatchesSpec('management', 'GET', '/service-policies/{id}', 200, detail.body);
    expect(detail.body.data).toMatchObject({
      id,
      name: 'sp-crud',
      semantic: 'AllOf',
      type: 'Dial',
      identityRoles: [`@${alice}`, '#eng'],
      identityRolesDisplay: [
        { role: `@${alice}`, name: '@sp-crud-alice' },
        { role: '#eng', name: '#eng' },
      ],
      serviceRoles: ['#all'],
      serviceRolesDisplay: [{ role: '#all', name: '#all' }],
      postureCheckRoles: [],
      postureCheckRolesDisplay: [],
      _links: { self: { href: `./service-policies/${id}` } },
    });

    const replaced = await call('PUT', `/service-policies/${id}`, {
      name: 'sp-crud-2',
      semantic: 'AnyOf',
      type: 'Bind',
      identityRoles: ['#ops'],
    });
    expect(replaced.status).toBe(200);
    expect((await call('GET', `/service-policies/${id}`)).body.data).toMatchObject({
      name: 'sp-crud-2',
      type: 'Bind',
      identityRoles: ['#ops'],
      serviceRoles: [],
    });

    const patched = await call('PATCH', `/service-policies/${id}`, { serviceRoles: ['#web'] });
    expect(patched.status).toBe(200);
    expect((await call('GET', `/service-policies/${id}`)).body.data).toMatchObject({
      name: 'sp-crud-2',
      identityRoles: ['#ops'],
      serviceRoles: ['#web'],
    });

    const list = await call('GET', '/service-policies?filter=name="sp-crud-2"');
    expectMatchesSpec('management', 'GET', '/service-policies', 200, list.body);
    expect(list.body.data.map((policy: { id: string }) => policy.id)).toEqual([id]);

    expect((await call('DELETE', `/service-policies/${id}`)).status).toBe(200);
    expect((await call('GET', `/service-policies/${id}`)).status).toBe(404);
  });

  it('refuses bad roles, semantics and types with the field named, and writes nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ identityRoles: ['eng'] }, 'identityRoles'],
      [{ serviceRoles: ['#all', '#web'] }, 'serviceRoles'],
      [{ identityRoles: ['@no-such-identity'] }, 'identityRoles'],
      [{ postureCheckRoles: ['@no-such-check'] }, 'postureCheckRoles'],
      [{ semantic: 'SomeOf' }, 'semantic'],
      [{ type: 'Host' }, 'type'],
    ];
    for (const [body, field] of cases) {
      const response = await servicePolicy({ name: `sp-bad-${field}`, ...body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('COULD_NOT_VALIDATE');
      expect(JSON.stringify(response.body.error.cause ?? response.body.error), JSON.stringify(body)).toContain(field);
    }
    const missing = await servicePolicy({ name: 'sp-missing-id', identityRoles: ['@nope'] });
    expect(missing.body.error.cause.reason).toBe('no identities found with the given ids');
    const list = await call('GET', '/service-policies?filter=name contains "sp-bad"');
    expect(list.body.data).toEqual([]);
  });

  it('keeps the selection items in step: an identity finds exactly the policies that select it', async () => {
    const bob = await identity('sp-sel-bob', ['eng', 'web']);
    const named = (await servicePolicy({ name: 'sp-sel-named', identityRoles: [`@${bob}`] })).body.data.id;
    const allOf = (await servicePolicy({ name: 'sp-sel-allof', semantic: 'AllOf', identityRoles: ['#eng', '#web'] }))
      .body.data.id;
    const allOfMiss = (
      await servicePolicy({ name: 'sp-sel-allof-miss', semantic: 'AllOf', identityRoles: ['#eng', '#ops'] })
    ).body.data.id;
    const anyOf = (await servicePolicy({ name: 'sp-sel-anyof', identityRoles: ['#ops', '#web'] })).body.data.id;
    const all = (await servicePolicy({ name: 'sp-sel-all', identityRoles: ['#all'] })).body.data.id;

    const found = await policiesOfIdentity(bob, ['eng', 'web']);
    expect(found).toEqual(expect.arrayContaining([named, allOf, anyOf, all]));
    expect(found).not.toContain(allOfMiss);

    // A change of semantic rewrites the records: the AllOf miss becomes an AnyOf match.
    await call('PATCH', `/service-policies/${allOfMiss}`, { semantic: 'AnyOf' });
    expect(await policiesOfIdentity(bob, ['eng', 'web'])).toContain(allOfMiss);
    // Dropping a role removes its item; deleting the policy removes them all.
    await call('PATCH', `/service-policies/${anyOf}`, { identityRoles: ['#ops'] });
    expect(await policiesOfIdentity(bob, ['eng', 'web'])).not.toContain(anyOf);
    await call('DELETE', `/service-policies/${named}`);
    expect(await policiesOfIdentity(bob, ['eng', 'web'])).not.toContain(named);
  });
});

describe('edge router policies', () => {
  it('creates one with identity and edge router roles and shows isSystem false', async () => {
    const created = await call('POST', '/edge-router-policies', {
      name: 'erp-crud',
      semantic: 'AnyOf',
      identityRoles: ['#all'],
      edgeRouterRoles: ['#public'],
    });
    expect(created.status).toBe(201);
    const detail = await call('GET', `/edge-router-policies/${created.body.data.id}`);
    expectMatchesSpec('management', 'GET', '/edge-router-policies/{id}', 200, detail.body);
    expect(detail.body.data).toMatchObject({
      isSystem: false,
      identityRolesDisplay: [{ role: '#all', name: '#all' }],
      edgeRouterRolesDisplay: [{ role: '#public', name: '#public' }],
    });
  });
});

describe('service edge router policies', () => {
  it('creates one with service and edge router roles', async () => {
    const created = await call('POST', '/service-edge-router-policies', {
      name: 'serp-crud',
      semantic: 'AllOf',
      serviceRoles: ['#all'],
      edgeRouterRoles: ['#all'],
    });
    expect(created.status).toBe(201);
    const detail = await call('GET', `/service-edge-router-policies/${created.body.data.id}`);
    expectMatchesSpec('management', 'GET', '/service-edge-router-policies/{id}', 200, detail.body);
  });
});

describe('deleting an entity a policy names by @id', () => {
  /** A policy as GET shows it. */
  const detail = async (path: string) => (await call('GET', path)).body.data;
  /** The ids a policy's member list shows. */
  const members = async (path: string): Promise<string[]> =>
    (await call('GET', path)).body.data.map((entity: { id: string }) => entity.id);
  const deleted = async (path: string) => expect((await call('DELETE', path)).status).toBe(200);

  it('takes its @id out of every policy naming it, keeping the policies and their other roles', async () => {
    const person = await identity('named-person');
    const app = await createdId('/services', { name: 'named-app' });
    const edge = await createdId('/edge-routers', { name: 'named-edge' });
    const check = await createdId('/posture-checks', {
      name: 'named-check',
      typeId: 'MAC',
      macAddresses: ['00:1A:2B:3C:4D:6E'],
    });
    const sp = await createdId('/service-policies', {
      name: 'named-sp',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${person}`, '#named-people'],
      serviceRoles: [`@${app}`, '#named-apps'],
      postureCheckRoles: [`@${check}`, '#named-checks'],
    });
    const erp = await createdId('/edge-router-policies', {
      name: 'named-erp',
      semantic: 'AnyOf',
      identityRoles: [`@${person}`, '#named-people'],
      edgeRouterRoles: [`@${edge}`, '#named-edges'],
    });
    const serp = await createdId('/service-edge-router-policies', {
      name: 'named-serp',
      semantic: 'AnyOf',
      serviceRoles: [`@${app}`, '#named-apps'],
      edgeRouterRoles: [`@${edge}`, '#named-edges'],
    });
    const memberLists: Record<string, string> = {
      [`/service-policies/${sp}/identities`]: person,
      [`/service-policies/${sp}/services`]: app,
      [`/service-policies/${sp}/posture-checks`]: check,
      [`/edge-router-policies/${erp}/identities`]: person,
      [`/edge-router-policies/${erp}/edge-routers`]: edge,
      [`/service-edge-router-policies/${serp}/services`]: app,
      [`/service-edge-router-policies/${serp}/edge-routers`]: edge,
    };
    for (const [path, id] of Object.entries(memberLists)) expect(await members(path)).toEqual([id]);

    for (const path of [
      `/identities/${person}`,
      `/services/${app}`,
      `/edge-routers/${edge}`,
      `/posture-checks/${check}`,
    ])
      await deleted(path);

    expect(await detail(`/service-policies/${sp}`)).toMatchObject({
      name: 'named-sp',
      identityRoles: ['#named-people'],
      identityRolesDisplay: [{ role: '#named-people', name: '#named-people' }],
      serviceRoles: ['#named-apps'],
      postureCheckRoles: ['#named-checks'],
    });
    expect(await detail(`/edge-router-policies/${erp}`)).toMatchObject({
      identityRoles: ['#named-people'],
      edgeRouterRoles: ['#named-edges'],
    });
    expect(await detail(`/service-edge-router-policies/${serp}`)).toMatchObject({
      serviceRoles: ['#named-apps'],
      edgeRouterRoles: ['#named-edges'],
    });
    for (const path of Object.keys(memberLists)) expect(await members(path)).toEqual([]);
    expect(await integrityRun(controller().deps, 'check')).toEqual([]);
  });

  it("takes a tunneling router's @id out of policies naming it as edge router and as identity", async () => {
    const router = await createdId('/edge-routers', { name: 'named-tunneler', isTunnelerEnabled: true });
    const erp = await createdId('/edge-router-policies', {
      name: 'named-tunneler-erp',
      semantic: 'AnyOf',
      identityRoles: [`@${router}`, '#named-riders'],
      edgeRouterRoles: [`@${router}`, '#named-tunnelers'],
    });
    await deleted(`/edge-routers/${router}`);
    expect(await detail(`/edge-router-policies/${erp}`)).toMatchObject({
      identityRoles: ['#named-riders'],
      edgeRouterRoles: ['#named-tunnelers'],
    });
    // Its system policy and router identity went with it.
    expect((await call('GET', `/edge-router-policies/${router}`)).status).toBe(404);
    expect((await call('GET', `/identities/${router}`)).status).toBe(404);
    expect(await integrityRun(controller().deps, 'check')).toEqual([]);
  });

  it("takes a router identity's @id out of the policies naming it when tunneling is turned off", async () => {
    const router = await createdId('/edge-routers', { name: 'named-untunneled', isTunnelerEnabled: true });
    const erp = await createdId('/edge-router-policies', {
      name: 'named-untunneled-erp',
      semantic: 'AnyOf',
      identityRoles: [`@${router}`, '#named-riders'],
      edgeRouterRoles: [`@${router}`],
    });
    expect((await call('PATCH', `/edge-routers/${router}`, { isTunnelerEnabled: false })).status).toBe(200);
    expect((await call('GET', `/identities/${router}`)).status).toBe(404);
    // The router stays, and so does its @id; its identity's is gone.
    expect(await detail(`/edge-router-policies/${erp}`)).toMatchObject({
      identityRoles: ['#named-riders'],
      edgeRouterRoles: [`@${router}`],
    });
    expect(await integrityRun(controller().deps, 'check')).toEqual([]);
  });

  it('updates the policies in transactions of their own first when more name it than its delete can hold', async () => {
    const person = await identity('named-by-many');
    const policies: string[] = [];
    for (let i = 0; i < 30; i++) {
      policies.push(
        await createdId('/service-policies', {
          name: `named-by-many-${i}`,
          type: 'Bind',
          semantic: 'AllOf',
          identityRoles: [`@${person}`, '#many-people'],
          serviceRoles: ['#many-apps'],
        }),
      );
    }
    await deleted(`/identities/${person}`);
    for (const policy of policies) {
      expect(await detail(`/service-policies/${policy}`)).toMatchObject({
        identityRoles: ['#many-people'],
        serviceRoles: ['#many-apps'],
      });
    }
    expect(await integrityRun(controller().deps, 'check')).toEqual([]);
  });
});
