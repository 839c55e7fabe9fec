import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  claimsOf,
  exchangeToken,
  goSdkRefresh,
  oidcPasswordTokens,
  postForm,
  refreshGrant,
  TOKEN_TYPE,
} from '../support/oidc-client.ts';

// Lowered lifetimes, as `OIDC_ACCESS_TOKEN_SECONDS` and `OIDC_REFRESH_TOKEN_SECONDS` set them.
const ACCESS_SECONDS = 120;
const REFRESH_SECONDS = 600;
const { controller, call, userUnder } = useAdminController({
  oidc: { ...loadConfig({}).oidc, accessTokenSeconds: ACCESS_SECONDS, refreshTokenSeconds: REFRESH_SECONDS },
});

/** A user logged in through the provider as the given client (the Go SDK's `native`, the C SDK's `openziti`). */
async function loggedIn(name: string, clientId = 'native') {
  const user = await userUnder('default', name);
  const tokens = await oidcPasswordTokens(controller(), user.username, user.password, clientId);
  return { user, tokens, apiSessionId: String(claimsOf(tokens.accessToken).z_asid) };
}

describe('token exchange, as the Go SDK refreshes', () => {
  it('gives new tokens for the refresh token, then an ID token for the same one, on the same session', async () => {
    const { user, tokens, apiSessionId } = await loggedIn('oidc-exchange-user');

    const exchanged = await exchangeToken(controller(), tokens.refreshToken, TOKEN_TYPE.refresh, TOKEN_TYPE.refresh);
    const id = await exchangeToken(controller(), tokens.refreshToken, TOKEN_TYPE.refresh, TOKEN_TYPE.id);

    expect(exchanged.status).toBe(200);
    expect(exchanged.headers['cache-control']).toBe('no-store');
    expect(exchanged.body).toMatchObject({
      issued_token_type: TOKEN_TYPE.refresh,
      token_type: 'Bearer',
      expires_in: ACCESS_SECONDS,
      refresh_token: expect.any(String),
    });
    expect(claimsOf(exchanged.body.access_token)).toMatchObject({
      z_t: 'a',
      z_asid: apiSessionId,
      sub: user.identityId,
      client_id: 'native',
      aud: ['native'],
    });
    expect(claimsOf(exchanged.body.refresh_token)).toMatchObject({ z_t: 'r', z_asid: apiSessionId });
    expect(id.status).toBe(200);
    expect(id.body).toMatchObject({ issued_token_type: TOKEN_TYPE.id, token_type: 'N_A' });
    expect(id.body.refresh_token).toBeUndefined();
    const idClaims = claimsOf(id.body.access_token);
    expect(idClaims).toMatchObject({ sub: user.identityId, z_asid: apiSessionId, azp: 'native' });
    expect(idClaims.z_t).toBeUndefined();

    // The SDK's next refresh uses the refresh token the first exchange gave.
    const next = await goSdkRefresh(controller(), {
      ...tokens,
      accessToken: exchanged.body.access_token,
      refreshToken: exchanged.body.refresh_token,
    });
    expect(claimsOf(next.accessToken).z_asid).toBe(apiSessionId);
  });

  it('spends the refresh token once: a second exchange for tokens, and a refresh grant, are refused', async () => {
    const { tokens } = await loggedIn('oidc-exchange-spent-user');
    await goSdkRefresh(controller(), tokens);

    const again = await exchangeToken(controller(), tokens.refreshToken, TOKEN_TYPE.refresh, TOKEN_TYPE.refresh);
    const asAccess = await exchangeToken(controller(), tokens.refreshToken, TOKEN_TYPE.refresh, TOKEN_TYPE.access);
    const refreshed = await refreshGrant(controller(), tokens.refreshToken, 'native');

    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_request');
    expect(asAccess.body.error).toBe('invalid_request');
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  it('exchanges an access token for access and ID tokens without spending it, never for a refresh token', async () => {
    const { tokens, apiSessionId } = await loggedIn('oidc-exchange-access-user');
    const withoutRefresh = { ...tokens, refreshToken: '' };

    const first = await goSdkRefresh(controller(), withoutRefresh);
    const second = await goSdkRefresh(controller(), withoutRefresh);
    const forRefresh = await exchangeToken(controller(), tokens.accessToken, TOKEN_TYPE.access, TOKEN_TYPE.refresh);

    expect(first.refreshToken).toBe('');
    expect(claimsOf(second.accessToken)).toMatchObject({ z_t: 'a', z_asid: apiSessionId });
    expect(claimsOf(first.idToken).z_asid).toBe(apiSessionId);
    expect(forRefresh.status).toBe(400);
    expect(forRefresh.body.error).toBe('invalid_request');
    // The refresh token was never touched: it still refreshes.
    expect((await refreshGrant(controller(), tokens.refreshToken, 'native')).status).toBe(200);
  });

  it("refuses another client's token, an unknown client, and subjects that are not tokens of ours", async () => {
    const { tokens } = await loggedIn('oidc-exchange-client-user');

    const otherClient = await exchangeToken(
      controller(),
      tokens.refreshToken,
      TOKEN_TYPE.refresh,
      TOKEN_TYPE.refresh,
      'openziti',
    );
    const unknownClient = await exchangeToken(
      controller(),
      tokens.refreshToken,
      TOKEN_TYPE.refresh,
      TOKEN_TYPE.refresh,
      'nobody',
    );
    const garbage = await exchangeToken(controller(), 'not-a-token', TOKEN_TYPE.refresh, TOKEN_TYPE.refresh);
    const idSubject = await exchangeToken(controller(), tokens.idToken, TOKEN_TYPE.id, TOKEN_TYPE.access);
    const accessAsRefresh = await exchangeToken(controller(), tokens.accessToken, TOKEN_TYPE.refresh, TOKEN_TYPE.id);

    expect(otherClient.status).toBe(400);
    expect(otherClient.body.error).toBe('invalid_request');
    expect(unknownClient.status).toBe(401);
    expect(unknownClient.body.error).toBe('invalid_client');
    expect(garbage.body.error).toBe('invalid_request');
    expect(idSubject.body.error).toBe('invalid_request');
    expect(accessAsRefresh.body.error).toBe('invalid_request');
    // None of them spent the refresh token.
    expect((await goSdkRefresh(controller(), tokens)).refreshToken).not.toBe('');
  });
});

describe('a session that ended refuses refresh and exchange', () => {
  /** Two sessions of one user: the C SDK's (refresh grant) and the Go SDK's (token exchange). */
  async function bothSdks(name: string) {
    const user = await userUnder('default', name);
    const c = await oidcPasswordTokens(controller(), user.username, user.password, 'openziti');
    const go = await oidcPasswordTokens(controller(), user.username, user.password, 'native');
    return { user, c, go };
  }

  async function expectBothRefused(c: { refreshToken: string }, go: { refreshToken: string }) {
    const refreshed = await refreshGrant(controller(), c.refreshToken);
    const exchanged = await exchangeToken(controller(), go.refreshToken, TOKEN_TYPE.refresh, TOKEN_TYPE.refresh);
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
    expect(exchanged.status).toBe(400);
    expect(exchanged.body.error).toBe('invalid_request');
  }

  it('when the identity is disabled', async () => {
    const { user, c, go } = await bothSdks('oidc-disabled-user');

    const disabled = await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 });

    expect(disabled.status).toBe(200);
    await expectBothRefused(c, go);
  });

  it('when an admin deletes the API session', async () => {
    const { c, go } = await bothSdks('oidc-deleted-session-user');

    for (const tokens of [c, go]) {
      const deleted = await call('DELETE', `/api-sessions/${String(claimsOf(tokens.accessToken).z_asid)}`);
      expect(deleted.status).toBe(200);
    }

    await expectBothRefused(c, go);
  });

  it('when the authenticator that logged in is deleted', async () => {
    const { user, c, go } = await bothSdks('oidc-deleted-authenticator-user');

    const deleted = await call('DELETE', `/authenticators/${user.authenticatorId}`);

    expect(deleted.status).toBe(200);
    await expectBothRefused(c, go);
  });
});

describe('POST /oidc/revoke', () => {
  it('ends the session of a refresh token: it no longer refreshes, and the session is gone', async () => {
    const { tokens, apiSessionId } = await loggedIn('oidc-revoke-refresh-user', 'openziti');

    const revoked = await postForm(
      controller(),
      '/oidc/revoke',
      { token: tokens.refreshToken, token_type_hint: 'refresh_token' },
      'openziti',
    );

    expect(revoked.status).toBe(200);
    expect(revoked.text).toBe('');
    expect((await refreshGrant(controller(), tokens.refreshToken)).body.error).toBe('invalid_grant');
    expect((await call('GET', `/api-sessions/${apiSessionId}`)).status).toBe(404);
  });

  it('ends the session of an access token too', async () => {
    const { tokens, apiSessionId } = await loggedIn('oidc-revoke-access-user');

    const revoked = await postForm(controller(), '/oidc/revoke', { token: tokens.accessToken, client_id: 'native' });

    expect(revoked.status).toBe(200);
    const exchanged = await exchangeToken(controller(), tokens.refreshToken, TOKEN_TYPE.refresh, TOKEN_TYPE.refresh);
    expect(exchanged.body.error).toBe('invalid_request');
    expect((await call('GET', `/api-sessions/${apiSessionId}`)).status).toBe(404);
  });

  it('answers 200 for tokens it does not know or that are spent, ending nothing; refuses unknown clients', async () => {
    const { tokens } = await loggedIn('oidc-revoke-unknown-user');
    const next = await goSdkRefresh(controller(), tokens);

    const unknown = await postForm(controller(), '/oidc/revoke', { token: 'no-such-token' }, 'native');
    const spent = await postForm(controller(), '/oidc/revoke', { token: tokens.refreshToken }, 'native');
    const noClient = await postForm(controller(), '/oidc/revoke', { token: next.refreshToken });
    const otherClient = await postForm(controller(), '/oidc/revoke', { token: next.refreshToken }, 'openziti');

    expect(unknown.status).toBe(200);
    expect(spent.status).toBe(200);
    expect(noClient.status).toBe(401);
    expect(noClient.body.error).toBe('invalid_client');
    expect(otherClient.status).toBe(401);
    expect((await goSdkRefresh(controller(), next)).accessToken).toEqual(expect.any(String));
  });
});

describe('GET|POST /oidc/end_session', () => {
  it('ends the hinted session and sends the client to its post-logout URI with the state', async () => {
    const { tokens, apiSessionId } = await loggedIn('oidc-end-session-user', 'openziti');
    const query = new URLSearchParams({
      id_token_hint: tokens.idToken,
      post_logout_redirect_uri: 'http://127.0.0.1:20314/auth/logout',
      state: 'xyz',
    });

    const ended = await controller().call('GET', `/oidc/end_session?${query}`);

    expect(ended.status).toBe(302);
    expect(ended.headers.location).toBe('http://127.0.0.1:20314/auth/logout?state=xyz');
    expect((await refreshGrant(controller(), tokens.refreshToken)).body.error).toBe('invalid_grant');
    expect((await call('GET', `/api-sessions/${apiSessionId}`)).status).toBe(404);
  });

  it('sends the client to the signed-out page when it names no client, and takes a POST form', async () => {
    const { tokens } = await loggedIn('oidc-end-session-post-user');

    const ended = await postForm(controller(), '/oidc/end_session', { id_token_hint: tokens.idToken });
    const anonymous = await controller().call(
      'GET',
      '/oidc/end_session?post_logout_redirect_uri=openziti%3A%2F%2Fauth%2Flogout',
    );

    expect(ended.status).toBe(302);
    expect(ended.headers.location).toBe(`${controller().origin}/oidc/logged-out`);
    expect((await exchangeToken(controller(), tokens.refreshToken, TOKEN_TYPE.refresh, TOKEN_TYPE.id)).status).toBe(
      400,
    );
    // Without a client the reference ignores the URI.
    expect(anonymous.headers.location).toBe(`${controller().origin}/oidc/logged-out`);
    expect((await controller().call('GET', '/oidc/logged-out')).status).toBe(200);
  });

  it('refuses a hint that does not verify and a post-logout URI not allowed, ending nothing', async () => {
    const { tokens } = await loggedIn('oidc-end-session-refused-user');

    const badHint = await controller().call('GET', `/oidc/end_session?id_token_hint=${tokens.idToken}x`);
    const accessHint = await controller().call('GET', `/oidc/end_session?id_token_hint=${tokens.accessToken}`);
    const badUri = await controller().call(
      'GET',
      `/oidc/end_session?${new URLSearchParams({ id_token_hint: tokens.idToken, post_logout_redirect_uri: 'https://evil.example/auth/logout' })}`,
    );

    expect(badHint.status).toBe(400);
    expect(accessHint.status).toBe(400);
    expect(badUri.status).toBe(400);
    expect(badUri.body.error).toBe('invalid_request');
    expect((await goSdkRefresh(controller(), tokens)).accessToken).toEqual(expect.any(String));
  });
});

describe('GET|POST /oidc/userinfo and POST /oidc/oauth/introspect', () => {
  it('tells who a live access token speaks for, and refuses others with a Bearer challenge', async () => {
    const { user, tokens } = await loggedIn('oidc-userinfo-user');

    const byHeader = await controller().call('GET', '/oidc/userinfo', {
      headers: { authorization: `Bearer ${tokens.accessToken}` },
    });
    const byForm = await postForm(controller(), '/oidc/userinfo', { access_token: tokens.accessToken });
    const none = await controller().call('GET', '/oidc/userinfo');
    const refreshAsBearer = await controller().call('GET', '/oidc/userinfo', {
      headers: { authorization: `Bearer ${tokens.refreshToken}` },
    });

    expect(byHeader.status).toBe(200);
    expect(byHeader.body).toEqual({ sub: user.identityId, name: user.username, z_ia: false });
    expect(byForm.body).toEqual(byHeader.body);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(refreshAsBearer.status).toBe(401);
    expect(refreshAsBearer.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);

    await postForm(controller(), '/oidc/revoke', { token: tokens.accessToken }, 'native');
    const afterRevoke = await controller().call('GET', '/oidc/userinfo', {
      headers: { authorization: `Bearer ${tokens.accessToken}` },
    });
    expect(afterRevoke.status).toBe(401);
    expect(afterRevoke.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
  });

  it('introspects live access and refresh tokens, and answers active false for the rest', async () => {
    const { user, tokens, apiSessionId } = await loggedIn('oidc-introspect-user');
    const introspect = (token: string, clientId?: string) =>
      postForm(controller(), '/oidc/oauth/introspect', { token }, clientId ?? 'native');

    const access = await introspect(tokens.accessToken);
    const refresh = await introspect(tokens.refreshToken);
    const garbage = await introspect('not-a-token');
    const noClient = await postForm(controller(), '/oidc/oauth/introspect', { token: tokens.accessToken });

    const claims = claimsOf(tokens.accessToken);
    expect(access.status).toBe(200);
    expect(access.body).toMatchObject({
      active: true,
      sub: user.identityId,
      client_id: 'native',
      token_type: 'Bearer',
      exp: claims.exp,
      iat: claims.iat,
      scope: 'openid offline_access',
      z_asid: apiSessionId,
    });
    expect(refresh.body).toMatchObject({ active: true, token_type: 'refresh_token', sub: user.identityId });
    expect(garbage.body).toEqual({ active: false });
    expect(noClient.status).toBe(401);

    await goSdkRefresh(controller(), tokens);
    expect((await introspect(tokens.refreshToken)).body).toEqual({ active: false });
    await call('DELETE', `/api-sessions/${apiSessionId}`);
    expect((await introspect(tokens.accessToken)).body).toEqual({ active: false });
  });
});

describe('token lifetimes', () => {
  it('follow the configured lifetimes in exp and expires_in, for every grant', async () => {
    const { tokens } = await loggedIn('oidc-lifetimes-user', 'openziti');
    const lifetime = (token: string) => Number(claimsOf(token).exp) - Number(claimsOf(token).iat);

    const refreshed = await refreshGrant(controller(), tokens.refreshToken);

    expect(tokens.expiresIn).toBe(ACCESS_SECONDS);
    expect(lifetime(tokens.accessToken)).toBe(ACCESS_SECONDS);
    expect(lifetime(tokens.idToken)).toBe(ACCESS_SECONDS);
    expect(lifetime(tokens.refreshToken)).toBe(REFRESH_SECONDS);
    expect(refreshed.body.expires_in).toBe(ACCESS_SECONDS);
    expect(lifetime(refreshed.body.access_token)).toBe(ACCESS_SECONDS);
    expect(lifetime(refreshed.body.refresh_token)).toBe(REFRESH_SECONDS);

    const native = await loggedIn('oidc-lifetimes-native-user');
    const exchanged = await goSdkRefresh(controller(), native.tokens);
    expect(exchanged.expiresIn).toBe(ACCESS_SECONDS);
    expect(lifetime(exchanged.accessToken)).toBe(ACCESS_SECONDS);
    expect(lifetime(exchanged.refreshToken)).toBe(REFRESH_SECONDS);
    expect(lifetime(exchanged.idToken)).toBe(ACCESS_SECONDS);
  });
});

describe('expired tokens', () => {
  it('are refused as subjects and bearers, while an expired ID token still hints a logout', async () => {
    const { tokens, apiSessionId } = await loggedIn('oidc-expired-user');

    // Past the access and ID tokens' lifetime and the minute of clock leeway; the refresh token still lives.
    controller().advanceClock((ACCESS_SECONDS + 90) * 1000);
    const exchanged = await exchangeToken(controller(), tokens.accessToken, TOKEN_TYPE.access, TOKEN_TYPE.access);
    const userinfo = await controller().call('GET', '/oidc/userinfo', {
      headers: { authorization: `Bearer ${tokens.accessToken}` },
    });
    const ended = await postForm(controller(), '/oidc/end_session', { id_token_hint: tokens.idToken });

    expect(exchanged.body.error).toBe('invalid_request');
    expect(userinfo.status).toBe(401);
    expect(ended.status).toBe(302);
    expect((await call('GET', `/api-sessions/${apiSessionId}`)).status).toBe(404);
  });
});
