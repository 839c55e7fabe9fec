import { describe, expect, it } from 'vitest';
import { hashPassword } from '#shared/auth/password-hash.ts';
import { idsOfToken } from '#shared/auth/session-token.ts';
import { authenticators } from '#shared/entities/authenticator.ts';
import { type Identity, identities, newIdentity } from '#shared/entities/identity.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';
import { tableItemCount, tableItems } from '../support/table-items.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';
import { useTestController } from '../support/use-controller.ts';

const controller = useTestController({ apiSessionTimeoutMinutes: 5 });

/** Arranges a non-admin identity with a password, straight in the store (the identity API has its own tests). */
async function createUser(name: string, username: string, password: string): Promise<Identity> {
  const now = new Date().toISOString();
  const identity = newIdentity({ id: `id-${name}`, name, createdAt: now });
  const { store } = controller().deps;
  await store.transact([
    ...store.createOps(identities, identity),
    ...store.createOps(
      authenticators,
      {
        id: `auth-${name}`,
        createdAt: now,
        updatedAt: now,
        tags: {},
        identityId: identity.id,
        method: 'updb',
        username,
        passwordHash: await hashPassword(password),
      },
      ['identityId'],
    ),
  ]);
  return identity;
}

const AUTH = '/edge/management/v1/authenticate?method=password';

describe('POST /authenticate?method=password', () => {
  it('creates an API session whose token is in the body and the zt-session header', async () => {
    const response = await controller().call('POST', AUTH, {
      body: {
        username: ADMIN_USERNAME,
        password: ADMIN_PASSWORD,
        configTypes: ['host.v1'],
        envInfo: { os: 'linux', arch: 'arm64', hostname: 'laptop' },
        sdkInfo: { type: 'ziti-sdk-golang', version: 'v1.2.3' },
      },
    });

    expect(response.status).toBe(200);
    expect(response.headers['zt-session']).toBe(response.body.data.token);
    // The secret part (a keyed MAC of the session's id, 32 bytes base64url: what the routers' endpoint derives again),
    // then the session's identity id and its authenticator's (base64url): the request reads session, identity and
    // authenticator together.
    expect(response.body.data.token).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(idsOfToken(response.body.data.token)).toEqual({
      identityId: response.body.data.identity.id,
      authenticatorId: response.body.data.authenticatorId,
    });
    expect(response.body.data.identity.name).toBe('Default Admin');
    expect(response.body.data.configTypes).toEqual(['host.v1']);
    expect(response.body.data.expirationSeconds).toBe(300);
    expect(response.body.data.isMfaRequired).toBe(false);
    expectMatchesSpec('management', 'POST', '/authenticate', 200, response.body);

    const identity = await controller().call('GET', '/edge/management/v1/current-identity', {
      token: response.body.data.token,
    });
    expect(identity.body.data.envInfo).toEqual({ os: 'linux', arch: 'arm64', hostname: 'laptop' });
    expect(identity.body.data.sdkInfo).toEqual({ type: 'ziti-sdk-golang', version: 'v1.2.3' });
  });

  it('works on the client API and on the un-prefixed legacy path', async () => {
    for (const path of ['/edge/client/v1/authenticate?method=password', '/authenticate?method=password']) {
      const response = await controller().call('POST', path, {
        body: { username: ADMIN_USERNAME, password: ADMIN_PASSWORD },
      });
      expect(response.status).toBe(200);
      expectMatchesSpec('client', 'POST', '/authenticate', 200, response.body);
    }
  });

  it('stores only a hash of the token', async () => {
    const token = await controller().login();
    const items = await tableItems(controller().deps);

    expect(JSON.stringify(items)).not.toContain(token);
    expect(JSON.stringify(items)).not.toContain(ADMIN_PASSWORD);
  });

  it('never writes the password or token to a log line', async () => {
    const token = await controller().login();
    await controller().call('GET', '/edge/management/v1/current-api-session', { token });

    const logs = controller().logLines.join('\n');
    expect(logs).toContain('api session created');
    expect(logs).not.toContain(ADMIN_PASSWORD);
    expect(logs).not.toContain(token);
  });

  it.each([
    ['a wrong password', { username: ADMIN_USERNAME, password: 'not-the-password' }],
    ['an unknown username', { username: 'nobody-here', password: ADMIN_PASSWORD }],
  ])('answers 401 INVALID_AUTH for %s', async (_case, body) => {
    const response = await controller().call('POST', AUTH, { body });

    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('INVALID_AUTH');
    expectMatchesSpec('management', 'POST', '/authenticate', 401, response.body);
  });

  it.each([
    ['no method', '/edge/management/v1/authenticate', 'method'],
    ['an unknown method', '/edge/management/v1/authenticate?method=magic', 'method'],
  ])('answers 400 COULD_NOT_VALIDATE for %s', async (_case, path, field) => {
    const response = await controller().call('POST', path, {
      body: { username: ADMIN_USERNAME, password: ADMIN_PASSWORD },
    });

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/authenticate' });
  });

  it.each([
    ['a missing password', { username: ADMIN_USERNAME }, 'password'],
    ['a too short username', { username: 'abc', password: ADMIN_PASSWORD }, 'username'],
    ['a password of the wrong type', { username: ADMIN_USERNAME, password: 12345 }, 'password'],
    ['envInfo of the wrong type', { username: ADMIN_USERNAME, password: ADMIN_PASSWORD, envInfo: 'linux' }, 'envInfo'],
    [
      'configTypes that are not strings',
      { username: ADMIN_USERNAME, password: ADMIN_PASSWORD, configTypes: [1] },
      'configTypes.0',
    ],
  ])('answers 400 COULD_NOT_VALIDATE naming the field for %s, and creates no session', async (_case, body, field) => {
    const before = await tableItemCount(controller().deps);

    const response = await controller().call('POST', AUTH, { body });

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/authenticate' });
    expect(await tableItemCount(controller().deps)).toBe(before);
  });
});

describe('the current API session', () => {
  it('is readable with its token and ends with logout', async () => {
    const token = await controller().login();

    const current = await controller().call('GET', '/edge/client/v1/current-api-session', { token });
    expect(current.status).toBe(200);
    expect(current.body.data.token).toBe(token);
    expectMatchesSpec('client', 'GET', '/current-api-session', 200, current.body);

    const logout = await controller().call('DELETE', '/edge/client/v1/current-api-session', { token });
    expect(logout.status).toBe(200);
    expect(logout.body.data).toEqual({});
    expectMatchesSpec('client', 'DELETE', '/current-api-session', 200, logout.body);

    const after = await controller().call('GET', '/edge/client/v1/current-api-session', { token });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('UNAUTHORIZED');
    expect(after.headers['www-authenticate']).toContain('error="invalid"');
  });

  it('answers 401 with a "missing" challenge when no token is sent', async () => {
    const response = await controller().call('GET', '/edge/management/v1/current-api-session');

    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toContain('zt-session realm="zt-session" error="missing"');
    expectMatchesSpec('management', 'GET', '/current-api-session', 401, response.body);
  });

  it('says which header carries the API session when none is sent, a bearer token included', async () => {
    const token = await controller().login();
    const sent: Record<string, string>[] = [{}, { authorization: `Bearer ${token}` }];
    for (const headers of sent) {
      const response = await controller().call('GET', '/edge/management/v1/identities', { headers });

      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('UNAUTHORIZED');
      expect(response.body.error.cause.message).toMatch(
        /send the token that POST \/authenticate returns in the zt-session header/,
      );
      expect(response.body.error.cause.message).toContain('Authorization: Bearer');
      expectMatchesSpec('management', 'GET', '/identities', 401, response.body);
    }
  });

  it('answers 401 for an unknown token', async () => {
    const response = await controller().call('GET', '/edge/management/v1/current-identity', {
      token: '00000000-0000-4000-8000-000000000000',
    });

    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toContain('error="invalid"');
  });

  it('expires after the inactivity timeout, and each request pushes the expiry back', async () => {
    const token = await controller().login();

    controller().advanceClock(4 * 60_000);
    const stillAlive = await controller().call('GET', '/edge/management/v1/current-api-session', { token });
    expect(stillAlive.status).toBe(200);
    expect(Date.parse(stillAlive.body.data.lastActivityAt)).toBeGreaterThan(Date.now() + 3 * 60_000);

    controller().advanceClock(4 * 60_000);
    const refreshed = await controller().call('GET', '/edge/management/v1/current-api-session', { token });
    expect(refreshed.status).toBe(200);

    controller().advanceClock(6 * 60_000);
    const expired = await controller().call('GET', '/edge/management/v1/current-api-session', { token });
    expect(expired.status).toBe(401);
  });
});

describe('GET /current-identity', () => {
  it('answers the identity of the session', async () => {
    const token = await controller().login();

    const response = await controller().call('GET', '/edge/management/v1/current-identity', { token });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      name: 'Default Admin',
      isAdmin: true,
      isDefaultAdmin: true,
      authPolicyId: 'default',
      typeId: 'Default',
      hasApiSession: true,
      authenticators: { updb: { username: ADMIN_USERNAME } },
    });
    expectMatchesSpec('management', 'GET', '/current-identity', 200, response.body);
  });
});

describe('admin access', () => {
  it('lets a non-admin use its own session and identity, but not admin-only management operations', async () => {
    await createUser('alice', 'alice-user', 'alice-password');
    const token = await controller().login('alice-user', 'alice-password');

    const own = await controller().call('GET', '/edge/client/v1/current-identity', { token });
    expect(own.status).toBe(200);
    expect(own.body.data.isAdmin).toBe(false);
  });
});
