import { describe, expect, it } from 'vitest';
import { SERVICE_POLICY } from '#shared/policy/access.ts';
import { policiesSelecting } from '#shared/policy/reach.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';

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
