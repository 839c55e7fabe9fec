import { createPublicKey } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { sessions } from '#shared/entities/session.ts';
import { sessionJwtVerificationKey } from '#shared/pki/session-jwt.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { csrFor } from '../support/pki-fixtures.ts';

const { controller, call, createdId } = useAdminController();

const C = '/edge/client/v1';
const client = (method: string, path: string, token: string | undefined, body?: unknown) =>
  controller().call(method, `${C}${path}`, {
    ...(token !== undefined ? { token } : {}),
    ...(body !== undefined ? { body } : {}),
  });

let counter = 0;
const unique = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`;

/** A non-admin identity with a password login, logged in: its id and token. */
async function user(roleAttributes: string[], isAdmin = false) {
  const name = unique('sess-user');
  const identityId = await createdId('/identities', { name, type: 'User', isAdmin, roleAttributes });
  await createdId('/authenticators', { identityId, method: 'updb', username: name, password: `${name}-Pw1!` });
  const token = await controller().login(name, `${name}-Pw1!`);
  return { identityId, name, token, password: `${name}-Pw1!` };
}

/**
 * A small network, with its own attributes so tests do not see each other's: a service, an edge router, policies
 * letting identities with the users attribute dial the service through the router.
 */
async function network(options: { postureCheckRoles?: string[]; type?: 'Dial' | 'Bind' } = {}) {
  const tag = unique('n');
  const serviceId = await createdId('/services', { name: unique('sess-svc'), roleAttributes: [`${tag}-svc`] });
  const routerId = await createdId('/edge-routers', {
    name: unique('sess-er'),
    cost: 7,
    roleAttributes: [`${tag}-er`],
  });
  const dialPolicyId = await createdId('/service-policies', {
    name: unique('sess-sp'),
    semantic: 'AnyOf',
    type: options.type ?? 'Dial',
    identityRoles: [`#${tag}-users`],
    serviceRoles: [`#${tag}-svc`],
    postureCheckRoles: options.postureCheckRoles ?? [],
  });
  await createdId('/edge-router-policies', {
    name: unique('sess-erp'),
    semantic: 'AnyOf',
    identityRoles: [`#${tag}-users`],
    edgeRouterRoles: [`#${tag}-er`],
  });
  await createdId('/service-edge-router-policies', {
    name: unique('sess-serp'),
    semantic: 'AnyOf',
    serviceRoles: [`#${tag}-svc`],
    edgeRouterRoles: ['#all'],
  });
  return { tag, serviceId, routerId, dialPolicyId, users: `${tag}-users` };
}

describe('POST /sessions (client)', () => {
  it('creates a Dial session carrying its token, service, API session and usable edge routers', async () => {
    const net = await network();
    const alice = await user([net.users]);

    const created = await client('POST', '/sessions', alice.token, { serviceId: net.serviceId, type: 'Dial' });
    expect(created.status).toBe(201);
    expectMatchesSpec('client', 'POST', '/sessions', 201, created.body);
    const session = created.body.data;
    expect(session).toMatchObject({
      serviceId: net.serviceId,
      service: { id: net.serviceId, entity: 'services' },
      identityId: alice.identityId,
      type: 'Dial',
      _links: { self: { href: `./sessions/${session.id}` } },
    });
    // A JWT, the token a v2 router accepts (what it says: 'session tokens are JWTs' below).
    expect(session.token).toMatch(/^ey[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(session.apiSession.id).toBe(session.apiSessionId);
    expect(session.edgeRouters).toEqual([
      expect.objectContaining({ cost: 7, isOnline: false, urls: {}, supportedProtocols: {}, noTraversal: false }),
    ]);

    // The same API session asking again gets the same session; the default type is Dial.
    const again = await client('POST', '/sessions', alice.token, { serviceId: net.serviceId });
    expect(again.status).toBe(201);
    expect(again.body.data).toMatchObject({ id: session.id, token: session.token });

    const detail = await client('GET', `/sessions/${session.id}`, alice.token);
    expect(detail.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/sessions/{id}', 200, detail.body);
    expect(detail.body.data).toMatchObject({ id: session.id, token: session.token, type: 'Dial' });

    const listed = await client('GET', '/sessions', alice.token);
    expect(listed.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/sessions', 200, listed.body);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([session.id]);

    const managed = await call('GET', `/sessions/${session.id}`);
    expect(managed.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/sessions/{id}', 200, managed.body);
    expect(managed.body.data.servicePolicies).toEqual([
      expect.objectContaining({ id: net.dialPolicyId, entity: 'service-policies' }),
    ]);
    const routePath = await call('GET', `/sessions/${session.id}/route-path`);
    expect(routePath.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/sessions/{id}/route-path', 200, routePath.body);
    expect(routePath.body.data).toEqual({ routePath: [] });
  });

  it('refuses services the caller cannot reach, the other type, bad bodies and callers without a session', async () => {
    const net = await network();
    const alice = await user([net.users]);
    const outsider = await user([]);

    const unknown = await client('POST', '/sessions', alice.token, { serviceId: 'no-such-service' });
    expect(unknown.status).toBe(404);
    expectMatchesSpec('client', 'POST', '/sessions', 404, unknown.body);
    expect((await client('POST', '/sessions', outsider.token, { serviceId: net.serviceId })).status).toBe(404);

    const bind = await client('POST', '/sessions', alice.token, { serviceId: net.serviceId, type: 'Bind' });
    expect(bind.status).toBe(400);
    expect(bind.body.error.cause).toMatchObject({ field: 'serviceId', reason: 'service not found' });

    const noService = await client('POST', '/sessions', alice.token, { type: 'Dial' });
    expect(noService.status).toBe(400);
    expect(noService.body.error.cause.field).toBe('serviceId');
    const badType = await client('POST', '/sessions', alice.token, { serviceId: net.serviceId, type: 'Invalid' });
    expect(badType.status).toBe(400);
    expect(badType.body.error.cause.field).toBe('type');

    const anonymous = await client('POST', '/sessions', undefined, { serviceId: net.serviceId });
    expect(anonymous.status).toBe(401);
  });

  it('answers NO_EDGE_ROUTERS_AVAILABLE when no router is both the identity’s and the service’s', async () => {
    const tag = unique('noer');
    const serviceId = await createdId('/services', { name: unique('sess-svc'), roleAttributes: [`${tag}-svc`] });
    await createdId('/service-policies', {
      name: unique('sess-sp'),
      semantic: 'AnyOf',
      type: 'Bind',
      identityRoles: [`#${tag}-users`],
      serviceRoles: [`#${tag}-svc`],
    });
    const bob = await user([`${tag}-users`]);
    const refused = await client('POST', '/sessions', bob.token, { serviceId, type: 'Bind' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('NO_EDGE_ROUTERS_AVAILABLE');
  });

  it('loses access the moment the identity’s role attributes no longer match', async () => {
    const net = await network();
    const carol = await user([net.users]);
    expect((await client('POST', '/sessions', carol.token, { serviceId: net.serviceId })).status).toBe(201);
    expect((await call('PATCH', `/identities/${carol.identityId}`, { roleAttributes: [] })).status).toBe(200);
    expect((await client('POST', '/sessions', carol.token, { serviceId: net.serviceId, type: 'Dial' })).status).toBe(
      404,
    );
  });
});

describe('session tokens are JWTs a v2 router verifies', () => {
  const YEAR_SECONDS = 365 * 24 * 60 * 60;

  /** The claims of `token`, verified as a router does: by the key its header's `kid` names, ES256, `aud` openziti. */
  async function verifiedAsRouter(token: string) {
    const published = await sessionJwtVerificationKey(controller().deps.signers.server);
    expect(published).toMatchObject({ format: 'PKIXPublicKey', usages: ['JWTValidation'] });
    const { kid } = decodeProtectedHeader(token);
    expect(kid).toBe(published.kid);
    const key = createPublicKey({ key: Buffer.from(published.der), format: 'der', type: 'spki' });
    const { payload, protectedHeader } = await jwtVerify(token, key, { algorithms: ['ES256'], audience: 'openziti' });
    expect(protectedHeader).toEqual({ alg: 'ES256', kid: published.kid, typ: 'JWT' });
    // The same key the controller publishes to enrolling clients: one key, one kid, for every JWT it signs.
    const jwks = await controller().call('GET', `${C}/enroll/jwks`);
    await jwtVerify(token, createLocalJWKSet(jwks.body), { audience: 'openziti' });
    return payload;
  }

  it.each(['Dial', 'Bind'] as const)('a %s session’s token carries the session’s claims', async (type) => {
    const net = await network({ type });
    const alice = await user([net.users]);
    const before = Math.floor(Date.now() / 1000);

    const created = await client('POST', '/sessions', alice.token, { serviceId: net.serviceId, type });
    expect(created.status).toBe(201);
    const session = created.body.data;
    const claims = await verifiedAsRouter(session.token);
    expect(claims).toEqual({
      iss: new URL(controller().origin).origin,
      sub: net.serviceId,
      aud: ['openziti'],
      iat: expect.any(Number),
      exp: (claims.iat as number) + YEAR_SECONDS,
      jti: session.id,
      z_t: 's',
      z_st: type,
      z_asid: session.apiSessionId,
      z_iid: alice.identityId,
      z_leg: true,
    });
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    expect(claims.iat).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));

    // The session the token names (`jti`) is stored: read back with the same token, found by it, deleted by id.
    const detail = await client('GET', `/sessions/${claims.jti}`, alice.token);
    expect(detail.body.data).toMatchObject({ id: session.id, token: session.token, type });
    const byToken = await call('GET', `/sessions?filter=${encodeURIComponent(`token = "${session.token}"`)}`);
    expect(byToken.body.data.map((s: { id: string }) => s.id)).toEqual([session.id]);
    expect((await client('DELETE', `/sessions/${claims.jti}`, alice.token)).status).toBe(200);
    expect((await call('GET', `/sessions/${claims.jti}`)).status).toBe(404);
  });
});

describe('edge routers, which no router process reports to', () => {
  // Routers report themselves (online, hostname, listeners) over the reference controller's router control channel,
  // which this controller does not have: enrolling is as far as a router gets, so none is ever online here.
  it('are listed in Dial and Bind sessions offline, without urls or protocols, and shown offline everywhere', async () => {
    const net = await network();
    await createdId('/service-policies', {
      name: unique('sess-sp-bind'),
      semantic: 'AnyOf',
      type: 'Bind',
      identityRoles: [`#${net.users}`],
      serviceRoles: [`#${net.tag}-svc`],
    });
    const alice = await user([net.users]);
    const token = (await call('GET', `/edge-routers/${net.routerId}`)).body.data.enrollmentToken;
    const csr = await csrFor('sess-er');
    const enrolled = await controller().call('POST', `${C}/enroll/erott`, {
      body: { token, clientCsr: csr.csr, serverCsr: csr.csr },
    });
    expect(enrolled.status, enrolled.text).toBe(200);
    const router = (await call('GET', `/edge-routers/${net.routerId}`)).body.data;

    const dial = await client('POST', '/sessions', alice.token, { serviceId: net.serviceId, type: 'Dial' });
    const bind = await client('POST', '/sessions', alice.token, { serviceId: net.serviceId, type: 'Bind' });

    const offline = {
      name: router.name,
      hostname: '',
      supportedProtocols: {},
      urls: {},
      syncStatus: 'SYNC_UNKNOWN',
      isOnline: false,
      cost: 7,
      noTraversal: false,
      disabled: false,
      appData: {},
    };
    expect([dial.status, bind.status]).toEqual([201, 201]);
    expectMatchesSpec('client', 'POST', '/sessions', 201, bind.body);
    expect(dial.body.data.edgeRouters).toEqual([offline]);
    expect(bind.body.data.edgeRouters).toEqual([offline]);
    expect((await client('GET', `/sessions/${dial.body.data.id}`, alice.token)).body.data.edgeRouters).toEqual([
      offline,
    ]);
    expect((await call('GET', `/sessions/${bind.body.data.id}`)).body.data.edgeRouters).toEqual([offline]);

    // The router itself: enrolled, and still offline with nothing reported, on both APIs.
    expect(router).toMatchObject({
      isVerified: true,
      isOnline: false,
      hostname: '',
      supportedProtocols: {},
      syncStatus: 'SYNC_UNKNOWN',
    });
    const { urls: _sessionOnly, ...clientView } = offline;
    const forService = await client('GET', `/services/${net.serviceId}/edge-routers`, alice.token);
    expectMatchesSpec('client', 'GET', '/services/{id}/edge-routers', 200, forService.body);
    expect(forService.body.data.edgeRouters).toEqual([clientView]);
    const mine = await client('GET', '/current-identity/edge-routers', alice.token);
    expect(mine.body.data).toEqual([expect.objectContaining({ id: net.routerId, ...clientView })]);
    const identity = await call('GET', `/identities/${alice.identityId}`);
    expect(identity.body.data).toMatchObject({ hasEdgeRouterConnection: false, edgeRouterConnectionStatus: 'offline' });
    const advice = await call('GET', `/identities/${alice.identityId}/policy-advice/${net.serviceId}`);
    expect(advice.body.data.commonRouters).toEqual([
      expect.objectContaining({ id: net.routerId, name: router.name, isOnline: false }),
    ]);
  });
});

describe('posture checks gate sessions', () => {
  it('refuses with INVALID_POSTURE and records it until the endpoint reports a passing posture', async () => {
    const checkAttribute = unique('corp');
    const checkId = await createdId('/posture-checks', {
      name: unique('sess-domain'),
      typeId: 'DOMAIN',
      domains: ['corp.example'],
      roleAttributes: [checkAttribute],
    });
    const net = await network({ postureCheckRoles: [`#${checkAttribute}`] });
    const dave = await user([net.users]);

    const refused = await client('POST', '/sessions', dave.token, { serviceId: net.serviceId });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('INVALID_POSTURE');
    // The client learns which checks failed, not what they expect.
    expect(refused.body.error.cause).toEqual({
      [net.dialPolicyId]: [{ id: checkId, typeId: 'DOMAIN', isPassing: false }],
    });

    const failures = await call('GET', `/identities/${dave.identityId}/failed-service-requests`);
    expect(failures.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/identities/{id}/failed-service-requests', 200, failures.body);
    expect(failures.body.data).toEqual([
      expect.objectContaining({
        serviceId: net.serviceId,
        sessionType: 'Dial',
        policyFailures: [
          expect.objectContaining({
            policyId: net.dialPolicyId,
            checks: [expect.objectContaining({ postureCheckId: checkId, expectedValue: ['corp.example'] })],
          }),
        ],
      }),
    ]);

    const wrongDomain = await client('POST', '/posture-response', dave.token, {
      id: checkId,
      typeId: 'DOMAIN',
      domain: 'home.example',
    });
    expect(wrongDomain.status).toBe(201);
    expectMatchesSpec('client', 'POST', '/posture-response', 201, wrongDomain.body);
    expect((await client('POST', '/sessions', dave.token, { serviceId: net.serviceId })).status).toBe(409);

    const reported = await client('POST', '/posture-response-bulk', dave.token, [
      { id: checkId, typeId: 'DOMAIN', domain: 'CORP.example' },
    ]);
    expect(reported.status).toBe(200);
    expectMatchesSpec('client', 'POST', '/posture-response-bulk', 200, reported.body);
    const allowed = await client('POST', '/sessions', dave.token, { serviceId: net.serviceId });
    expect(allowed.status).toBe(201);

    const data = await call('GET', `/identities/${dave.identityId}/posture-data`);
    expect(data.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/identities/{id}/posture-data', 200, data.body);
    expect(data.body.data.domain).toMatchObject({ postureCheckId: checkId, domain: 'CORP.example' });

    // Posture data is volatile: it goes with the API session.
    expect((await client('DELETE', '/current-api-session', dave.token)).status).toBe(200);
    const after = await call('GET', `/identities/${dave.identityId}/posture-data`);
    expect(after.body.data.domain.domain).toBe('');
    expect(after.body.data.apiSessionPostureData).toEqual({});
  });

  it('passes when any one granting policy’s checks pass', async () => {
    const attribute = unique('never');
    await createdId('/posture-checks', {
      name: unique('sess-mac'),
      typeId: 'MAC',
      macAddresses: ['aa:bb:cc:dd:ee:ff'],
      roleAttributes: [attribute],
    });
    const net = await network({ postureCheckRoles: [`#${attribute}`] });
    const erin = await user([net.users]);
    expect((await client('POST', '/sessions', erin.token, { serviceId: net.serviceId })).status).toBe(409);
    await createdId('/service-policies', {
      name: unique('sess-sp-open'),
      semantic: 'AnyOf',
      type: 'Dial',
      identityRoles: [`@${erin.identityId}`],
      serviceRoles: [`@${net.serviceId}`],
    });
    expect((await client('POST', '/sessions', erin.token, { serviceId: net.serviceId })).status).toBe(201);
  });
});

describe('posture responses', () => {
  it('answer 400 naming the field for unknown checks, the wrong type or missing fields', async () => {
    const checkId = await createdId('/posture-checks', {
      name: unique('sess-os'),
      typeId: 'OS',
      operatingSystems: [{ type: 'Linux', versions: ['>=5.0.0'] }],
    });
    const frank = await user([]);
    const post = (body: unknown, path = '/posture-response') => client('POST', path, frank.token, body);

    const unknown = await post({ id: 'no-such-check', typeId: 'DOMAIN', domain: 'x' });
    expect(unknown.status).toBe(400);
    expectMatchesSpec('client', 'POST', '/posture-response', 400, unknown.body);
    expect(unknown.body.error.cause.field).toBe('id');
    const wrongType = await post({ id: checkId, typeId: 'DOMAIN', domain: 'x' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.cause.field).toBe('typeId');
    const missing = await post({ id: checkId, typeId: 'OS', type: 'Linux' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.cause.field).toBe('version');
    const badTypeId = await post({ id: checkId, typeId: 'MFA' });
    expect(badTypeId.status).toBe(400);
    expect(badTypeId.body.error.cause.field).toBe('typeId');
    const bulk = await post(
      [
        { id: checkId, typeId: 'OS', type: 'Linux', version: '6.1.0' },
        { id: 'nope', typeId: 'OS', type: 'Linux', version: '6.1.0' },
      ],
      '/posture-response-bulk',
    );
    expect(bulk.status).toBe(400);
    expect(bulk.body.error.cause.field).toBe('1.id');
    expect((await client('POST', '/posture-response', undefined, { id: checkId })).status).toBe(401);

    const ok = await post({ id: checkId, typeId: 'OS', type: 'Linux', version: '6.1.0', build: '1' });
    expect(ok.status).toBe(201);
    expect(ok.body.data).toEqual({ services: [] });
    const state = await post({ id: 'endpoint', typeId: 'ENDPOINT_STATE', woken: true });
    expect(state.status).toBe(201);
    const data = await call('GET', `/identities/${frank.identityId}/posture-data`);
    expect(data.body.data.os).toMatchObject({ postureCheckId: checkId, type: 'Linux', version: '6.1.0', build: '1' });
    const [sessionData] = Object.values(data.body.data.apiSessionPostureData) as {
      endpointState: { wokenAt: string };
    }[];
    expect(Date.parse(sessionData?.endpointState.wokenAt ?? '')).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('session lifetime', () => {
  it('ends a session with its API session (logout, admin delete) and with its identity disabled', async () => {
    const net = await network();
    const open = async (who: { token: string }) =>
      (await client('POST', '/sessions', who.token, { serviceId: net.serviceId })).body.data.id as string;
    const gone = async (id: string) => (await call('GET', `/sessions/${id}`)).status === 404;

    const loggingOut = await user([net.users]);
    const first = await open(loggingOut);
    expect(await gone(first)).toBe(false);
    expect((await client('DELETE', '/current-api-session', loggingOut.token)).status).toBe(200);
    expect(await gone(first)).toBe(true);

    const deleted = await user([net.users]);
    const second = await open(deleted);
    const apiSessionId = (await call('GET', `/sessions/${second}`)).body.data.apiSessionId as string;
    expect((await call('DELETE', `/api-sessions/${apiSessionId}`)).status).toBe(200);
    expect(await gone(second)).toBe(true);

    const disabled = await user([net.users]);
    const third = await open(disabled);
    expect((await call('POST', `/identities/${disabled.identityId}/disable`, { durationMinutes: 0 })).status).toBe(200);
    expect(await gone(third)).toBe(true);
  });

  it('ends the sessions of a deleted service, as the reference does', async () => {
    const net = await network();
    const owner = await user([net.users]);
    const id = (await client('POST', '/sessions', owner.token, { serviceId: net.serviceId })).body.data.id as string;
    expect((await call('DELETE', `/services/${net.serviceId}`)).status).toBe(200);
    expect((await client('GET', '/sessions', owner.token)).body.data).toEqual([]);
    expect((await client('GET', `/sessions/${id}`, owner.token)).status).toBe(404);
    expect((await call('GET', `/sessions/${id}`)).status).toBe(404);
    expect((await controller().deps.store.get(sessions, id))?.doc).toBe(undefined);
  });

  it('deletes a session by id on either API; a caller sees and deletes only its own', async () => {
    const net = await network();
    const owner = await user([net.users]);
    const other = await user([net.users]);
    const mine = (await client('POST', '/sessions', owner.token, { serviceId: net.serviceId })).body.data.id as string;
    const theirs = (await client('POST', '/sessions', other.token, { serviceId: net.serviceId })).body.data
      .id as string;

    expect((await client('GET', `/sessions/${theirs}`, owner.token)).status).toBe(404);
    expect((await client('DELETE', `/sessions/${theirs}`, owner.token)).status).toBe(404);
    const listed = await client('GET', '/sessions', owner.token);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([mine]);

    const removed = await client('DELETE', `/sessions/${mine}`, owner.token);
    expect(removed.status).toBe(200);
    expectMatchesSpec('client', 'DELETE', '/sessions/{id}', 200, removed.body);
    expect((await client('GET', `/sessions/${mine}`, owner.token)).status).toBe(404);
    expect((await client('DELETE', `/sessions/${mine}`, owner.token)).status).toBe(404);

    // An admin identity sees every session on the client API too, as the reference's list does.
    const clientAdmin = await user([], true);
    const all = await client('GET', `/sessions?limit=500`, clientAdmin.token);
    expect(all.body.data.map((s: { id: string }) => s.id)).toEqual(expect.arrayContaining([theirs]));

    const byAdmin = await call('DELETE', `/sessions/${theirs}`);
    expect(byAdmin.status).toBe(200);
    expectMatchesSpec('management', 'DELETE', '/sessions/{id}', 200, byAdmin.body);
    expect((await call('DELETE', `/sessions/${theirs}`)).status).toBe(404);
  });
});

describe('management sessions', () => {
  it('lists every session with paging and filters, and answers 401 to non-admins', async () => {
    const net = await network();
    const users = await Promise.all([user([net.users]), user([net.users]), user([net.users])]);
    const ids = await Promise.all(
      users.map(
        async (u) => (await client('POST', '/sessions', u.token, { serviceId: net.serviceId })).body.data.id as string,
      ),
    );

    const filtered = await call(
      'GET',
      `/sessions?filter=${encodeURIComponent(`serviceId = "${net.serviceId}"`)}&limit=2`,
    );
    expect(filtered.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/sessions', 200, filtered.body);
    expect(filtered.body.meta.pagination).toEqual({ limit: 2, offset: 0, totalCount: 3 });
    const rest = await call(
      'GET',
      `/sessions?filter=${encodeURIComponent(`serviceId = "${net.serviceId}"`)}&limit=2&offset=2`,
    );
    expect([...filtered.body.data, ...rest.body.data].map((s: { id: string }) => s.id).sort()).toEqual([...ids].sort());
    const badFilter = await call('GET', `/sessions?filter=${encodeURIComponent('nope = 1')}`);
    expect(badFilter.status).toBe(400);

    const nonAdmin = users[0]?.token as string;
    expect((await call('GET', '/sessions', undefined, nonAdmin)).status).toBe(401);
    expect((await call('GET', `/sessions/${ids[0]}`, undefined, nonAdmin)).status).toBe(401);
    expect((await call('DELETE', `/sessions/${ids[0]}`, undefined, nonAdmin)).status).toBe(401);
    expect((await call('GET', `/identities/${users[0]?.identityId}/posture-data`, undefined, nonAdmin)).status).toBe(
      401,
    );
    expect((await call('GET', '/sessions/no-such-session')).status).toBe(404);
    expect((await call('GET', '/sessions/no-such-session/route-path')).status).toBe(404);
    expect((await call('GET', '/identities/no-such-identity/posture-data')).status).toBe(404);
    expect((await call('GET', '/identities/no-such-identity/failed-service-requests')).status).toBe(404);
  });
});
