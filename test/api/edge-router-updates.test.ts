import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';

const { call, createdId } = useAdminController();

/**
 * Edge routers are updated by the kit's PUT and PATCH: their update hook sees the router before and after the change
 * and writes, in the router's own transaction, what tunneling gives a router (its identity and system policy).
 */
describe('edge router updates through the kit', () => {
  const identityOf = async (id: string) => call('GET', `/identities/${id}`);
  const routerOf = async (id: string) => (await call('GET', `/edge-routers/${id}`)).body.data;

  it('turns tunneling on with PUT, giving the router its identity and system policy', async () => {
    const id = await createdId('/edge-routers', { name: 'eru-put', cost: 3 });

    const response = await call('PUT', `/edge-routers/${id}`, { name: 'eru-put', isTunnelerEnabled: true });

    expect(response.status).toBe(200);
    expect(await routerOf(id)).toMatchObject({ isTunnelerEnabled: true, cost: 0 });
    expect((await identityOf(id)).body.data).toMatchObject({ name: 'eru-put', type: { id: 'Router' } });
    expect((await call('GET', `/edge-router-policies/${id}`)).body.data).toMatchObject({ isSystem: true });
  });

  it('keeps the name on a PATCH null and gives other fields their zero value', async () => {
    const id = await createdId('/edge-routers', { name: 'eru-null', cost: 9, roleAttributes: ['east'] });

    const response = await call('PATCH', `/edge-routers/${id}`, { name: null, cost: null });

    expect(response.status).toBe(200);
    expect(await routerOf(id)).toMatchObject({ name: 'eru-null', cost: 0, roleAttributes: ['east'] });
  });

  it('refuses a rename to a transit router name and leaves router and identity as they were', async () => {
    const id = await createdId('/edge-routers', { name: 'eru-clash', isTunnelerEnabled: true });
    await createdId('/transit-routers', { name: 'eru-taken' });

    const response = await call('PATCH', `/edge-routers/${id}`, { name: 'eru-taken' });

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('name');
    expect((await routerOf(id)).name).toBe('eru-clash');
    expect((await identityOf(id)).body.data.name).toBe('eru-clash');
  });

  it('refuses a rename its router identity cannot follow, in the same transaction', async () => {
    const id = await createdId('/edge-routers', { name: 'eru-follow', isTunnelerEnabled: true });
    await createdId('/identities', { name: 'eru-person', type: 'User', isAdmin: false });

    const response = await call('PATCH', `/edge-routers/${id}`, { name: 'eru-person' });

    expect(response.status).toBe(400);
    expect((await routerOf(id)).name).toBe('eru-follow');
    expect((await identityOf(id)).body.data.name).toBe('eru-follow');
  });

  it('turning tunneling off takes the router identity out of the policies naming it', async () => {
    const id = await createdId('/edge-routers', { name: 'eru-named', isTunnelerEnabled: true });
    const policyId = await createdId('/service-policies', {
      name: 'eru-policy',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${id}`, '#others'],
    });

    const response = await call('PATCH', `/edge-routers/${id}`, { isTunnelerEnabled: false });

    expect(response.status).toBe(200);
    expect((await identityOf(id)).status).toBe(404);
    expect((await call('GET', `/service-policies/${policyId}`)).body.data.identityRoles).toEqual(['#others']);
  });
});
