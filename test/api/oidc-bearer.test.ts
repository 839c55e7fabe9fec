import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { claimsOf, form, oidcPasswordTokens } from '../support/oidc-client.ts';

const { controller, call, createdId, userUnder } = useAdminController({
  oidc: { advertise: true, accessTokenSeconds: 1800, refreshTokenSeconds: 86_400 },
});

const C = '/edge/client/v1';
const M = '/edge/management/v1';
const bearer = (accessToken: string) => ({ headers: { authorization: `Bearer ${accessToken}` } });
const refreshWith = (refreshToken: string) =>
  controller().call(
    'POST',
    '/oidc/oauth/token',
    form({ grant_type: 'refresh_token', client_id: 'openziti', refresh_token: refreshToken }),
  );

describe('OIDC access tokens on the edge APIs', () => {
  it('offers OIDC in /version when configured, with the edge-oidc API at the root', async () => {
    const version = await controller().call('GET', '/version');

    expect(version.body.data.capabilities).toEqual(['OIDC_AUTH']);
    expect(version.body.data.apiVersions['edge-oidc']).toEqual({
      v1: { path: '/oidc', apiBaseUrls: [`${controller().origin}/oidc`] },
    });
  });

  it('authenticates the client API as the session it stands for: current session, services', async () => {
    const user = await userUnder('default', 'oidc-bearer-user');
    await createdId('/services', { name: 'oidc-bearer-svc', roleAttributes: ['oidc-bearer'] });
    await createdId('/service-policies', {
      name: 'oidc-bearer-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${user.identityId}`],
      serviceRoles: ['#oidc-bearer'],
    });
    const tokens = await oidcPasswordTokens(controller(), user.username, user.password);

    const current = await controller().call('GET', `${C}/current-api-session`, bearer(tokens.accessToken));
    const services = await controller().call('GET', `${C}/services`, bearer(tokens.accessToken));
    const updates = await controller().call(
      'GET',
      `${C}/current-api-session/service-updates`,
      bearer(tokens.accessToken),
    );

    expect(current.status).toBe(200);
    expect(current.body.data).toMatchObject({
      id: claimsOf(tokens.accessToken).z_asid,
      identityId: user.identityId,
      token: tokens.accessToken,
    });
    expect(services.status).toBe(200);
    expect(services.body.data.map((service: { name: string }) => service.name)).toEqual(['oidc-bearer-svc']);
    expect(updates.status).toBe(200);
    expect(updates.body.data.lastChangeAt).toEqual(expect.any(String));
  });

  it("never acts as an admin, even for an admin identity: its session is an SDK's", async () => {
    const identityId = await createdId('/identities', { name: 'oidc-admin', type: 'User', isAdmin: true });
    await createdId('/authenticators', {
      identityId,
      method: 'updb',
      username: 'oidc-admin',
      password: 'oidc-admin-Passw0rd!',
    });
    const tokens = await oidcPasswordTokens(controller(), 'oidc-admin', 'oidc-admin-Passw0rd!');

    const own = await controller().call('GET', `${M}/current-identity`, bearer(tokens.accessToken));
    const adminOnly = await controller().call('GET', `${M}/identities`, bearer(tokens.accessToken));

    expect(own.status).toBe(200);
    expect(adminOnly.status).toBe(401);
    expect(adminOnly.body.error.code).toBe('UNAUTHORIZED');
  });

  it('answers 401 with the Bearer challenge to a token that does not verify, and keeps zt-session as it was', async () => {
    const user = await userUnder('default', 'oidc-tampered-user');
    const tokens = await oidcPasswordTokens(controller(), user.username, user.password);
    const [header, , signature] = tokens.accessToken.split('.');
    const forged = Buffer.from(JSON.stringify({ ...claimsOf(tokens.accessToken), sub: 'someone-else' })).toString(
      'base64url',
    );

    const tampered = await controller().call(
      'GET',
      `${C}/current-api-session`,
      bearer(`${header}.${forged}.${signature}`),
    );
    const legacy = await controller().call('GET', `${C}/current-api-session`, {
      token: (await controller().call('POST', `${C}/authenticate?method=password`, { body: user })).body.data.token,
    });

    expect(tampered.status).toBe(401);
    expect(tampered.headers['www-authenticate']).toContain('Bearer realm="openziti-oidc" error="invalid_token"');
    expect(legacy.status).toBe(200);
  });

  it('refuses an access token past its exp', async () => {
    const user = await userUnder('default', 'oidc-expired-user');
    const tokens = await oidcPasswordTokens(controller(), user.username, user.password);
    controller().advanceClock(31 * 60_000);
    try {
      const late = await controller().call('GET', `${C}/current-api-session`, bearer(tokens.accessToken));
      expect(late.status).toBe(401);
    } finally {
      controller().advanceClock(-31 * 60_000);
    }
  });

  it.each([
    [
      'the identity is disabled',
      (identityId: string) => call('POST', `/identities/${identityId}/disable`, { durationMinutes: 0 }),
    ],
    [
      'its API session is deleted by an admin',
      async (_identityId: string, sessionId: string) => call('DELETE', `/api-sessions/${sessionId}`),
    ],
    [
      'its authenticator is deleted',
      async (_identityId: string, _sessionId: string, authenticatorId: string) =>
        call('DELETE', `/authenticators/${authenticatorId}`),
    ],
  ])('refuses the next request and the next refresh once %s', async (_case, end) => {
    const user = await userUnder('default', `oidc-ended-${Math.random().toString(36).slice(2, 8)}`);
    const tokens = await oidcPasswordTokens(controller(), user.username, user.password);
    const sessionId = String(claimsOf(tokens.accessToken).z_asid);
    expect((await controller().call('GET', `${C}/current-api-session`, bearer(tokens.accessToken))).status).toBe(200);

    const ended = await end(user.identityId, sessionId, user.authenticatorId);
    expect(ended.status).toBe(200);

    const next = await controller().call('GET', `${C}/current-api-session`, bearer(tokens.accessToken));
    const refreshed = await refreshWith(tokens.refreshToken);
    expect(next.status).toBe(401);
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  it('logs out with DELETE /current-api-session: the access token and its refresh token are done', async () => {
    const user = await userUnder('default', 'oidc-logout-user');
    const tokens = await oidcPasswordTokens(controller(), user.username, user.password);

    const logout = await controller().call('DELETE', `${C}/current-api-session`, bearer(tokens.accessToken));

    expect(logout.status).toBe(200);
    expect((await controller().call('GET', `${C}/current-api-session`, bearer(tokens.accessToken))).status).toBe(401);
    expect((await refreshWith(tokens.refreshToken)).body.error).toBe('invalid_grant');
  });
});
