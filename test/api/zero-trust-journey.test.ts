import { describe, expect, it } from 'vitest';
import { SHARED_MARKER_LIFETIME_MS } from '../../functions/poll/shared-markers.ts';
import { useAdminController } from '../support/admin-controller.ts';

/**
 * Issue 7's "done when", end to end over HTTP: a non-admin identity created through the management API logs in on the
 * client API, sees exactly the services and routers its policies grant, creates a Dial session, and loses access the
 * moment a policy or its role attributes change — and `lastChangeAt` moves each time, so an SDK would refresh.
 */

const C = '/edge/client/v1';
const { controller, call, createdId, userUnder, login } = useAdminController();

const ids = (body: { data: { id: string }[] }) => body.data.map((item) => item.id).sort();

describe('a zero-trust journey', () => {
  it('grants exactly what the policies say, and takes it back the moment they or the identity change', async () => {
    // The network: two services, two routers, one identity, selected by attributes.
    const web = await createdId('/services', { name: 'journey-web', roleAttributes: ['web'] });
    const db = await createdId('/services', { name: 'journey-db', roleAttributes: ['db'] });
    const edgeA = await createdId('/edge-routers', { name: 'journey-edge-a', roleAttributes: ['public'] });
    await createdId('/edge-routers', { name: 'journey-edge-b', roleAttributes: ['private'] });
    const user = await userUnder('default', 'journey-user');
    await call('PATCH', `/identities/${user.identityId}`, { roleAttributes: ['engineering'] });

    const dial = await createdId('/service-policies', {
      name: 'journey-dial-web',
      type: 'Dial',
      semantic: 'AllOf',
      identityRoles: ['#engineering'],
      serviceRoles: ['#web'],
    });
    await createdId('/edge-router-policies', {
      name: 'journey-routers',
      semantic: 'AnyOf',
      identityRoles: ['#engineering'],
      edgeRouterRoles: ['#public'],
    });
    await createdId('/service-edge-router-policies', {
      name: 'journey-serp',
      semantic: 'AnyOf',
      serviceRoles: ['#all'],
      edgeRouterRoles: ['#all'],
    });

    // The identity logs in on the client API.
    const loggedIn = await login(user.username, user.password);
    expect(loggedIn.status).toBe(200);
    const token = loggedIn.body.data.token as string;
    const client = (method: string, path: string, body?: unknown) =>
      controller().call(method, `${C}${path}`, { token, ...(body === undefined ? {} : { body }) });
    // A function instance reads the change markers identities share at most once a lifetime: a change reaches the
    // poll that much later, so each reading is taken a lifetime on.
    const lastChangeAt = async () => {
      controller().advanceClock(SHARED_MARKER_LIFETIME_MS);
      return (await client('GET', '/current-api-session/service-updates')).body.data.lastChangeAt;
    };

    // It sees exactly the service and the router its policies grant.
    const services = await client('GET', '/services');
    expect(services.status).toBe(200);
    expect(ids(services.body)).toEqual([web]);
    expect(services.body.data[0].permissions).toEqual(['Dial']);
    expect((await client('GET', `/services/${db}`)).status).toBe(404);
    expect(ids((await client('GET', '/current-identity/edge-routers')).body)).toEqual([edgeA]);

    // It dials the service: the session carries the usable router.
    const session = await client('POST', '/sessions', { serviceId: web, type: 'Dial' });
    expect(session.status).toBe(201);
    const detail = await client('GET', `/sessions/${session.body.data.id}`);
    expect(detail.body.data).toMatchObject({ serviceId: web, type: 'Dial' });
    expect(detail.body.data.edgeRouters.map((router: { name: string }) => router.name)).toEqual(['journey-edge-a']);
    // Binding was never granted.
    expect((await client('POST', '/sessions', { serviceId: web, type: 'Bind' })).status).not.toBe(201);

    // A policy change takes the service away at once, and moves lastChangeAt (within a marker lifetime).
    const before = await lastChangeAt();
    await call('PATCH', `/service-policies/${dial}`, { serviceRoles: ['#db'] });
    expect(await lastChangeAt()).not.toBe(before);
    expect(ids((await client('GET', '/services')).body)).toEqual([db]);
    expect((await client('GET', `/services/${web}`)).status).toBe(404);
    expect((await client('POST', '/sessions', { serviceId: web, type: 'Dial' })).status).not.toBe(201);
    expect((await client('POST', '/sessions', { serviceId: db, type: 'Dial' })).status).toBe(201);

    // So does a change of the identity's own role attributes.
    const beforeAttributes = await lastChangeAt();
    await call('PATCH', `/identities/${user.identityId}`, { roleAttributes: ['sales'] });
    expect(await lastChangeAt()).not.toBe(beforeAttributes);
    expect(ids((await client('GET', '/services')).body)).toEqual([]);
    expect(ids((await client('GET', '/current-identity/edge-routers')).body)).toEqual([]);
    expect((await client('POST', '/sessions', { serviceId: db, type: 'Dial' })).status).not.toBe(201);

    // The management API answers the same questions from its side.
    await call('PATCH', `/identities/${user.identityId}`, { roleAttributes: ['engineering'] });
    expect(ids((await call('GET', `/identities/${user.identityId}/services`)).body)).toEqual([db]);
    expect(ids((await call('GET', `/services/${db}/identities`)).body)).toEqual([user.identityId]);
    const advice = await call('GET', `/identities/${user.identityId}/policy-advice/${db}`);
    expect(advice.body.data).toMatchObject({ isDialAllowed: true, isBindAllowed: false, identityRouterCount: 1 });
  });
});
