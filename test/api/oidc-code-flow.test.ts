import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import {
  authorize,
  claimsOf,
  codeAfterLogin,
  exchangeCode,
  form,
  oidcPasswordTokens,
  passwordLogin,
  REDIRECT_URI,
} from '../support/oidc-client.ts';

const { controller, userUnder } = useAdminController();

describe('the OIDC provider: discovery and keys', () => {
  it('describes itself at /oidc/.well-known and at the root, for the address the request reached', async () => {
    const under = await controller().call('GET', '/oidc/.well-known/openid-configuration');
    const root = await controller().call('GET', '/.well-known/openid-configuration');

    expect(under.status).toBe(200);
    expect(root.body).toEqual(under.body);
    const issuer = `${controller().origin}/oidc`;
    expect(under.body).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      jwks_uri: `${issuer}/keys`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
    });
    expect(under.body.openziti_endpoints).toEqual({
      password: `${issuer}/login/password`,
      cert: `${issuer}/login/cert`,
      ext_jwt: `${issuer}/login/ext-jwt`,
      totp: `${issuer}/login/totp`,
      totp_enroll: `${issuer}/login/totp/enroll`,
      totp_enroll_verify: `${issuer}/login/totp/enroll/verify`,
      auth_queries: `${issuer}/login/auth-queries`,
    });
  });

  it('publishes the server key, under the kid its tokens carry', async () => {
    const user = await userUnder('default', 'oidc-keys-user');
    const tokens = await oidcPasswordTokens(controller(), user.username, user.password);

    const keys = await controller().call('GET', '/oidc/keys');

    expect(keys.status).toBe(200);
    const header = JSON.parse(Buffer.from(tokens.accessToken.split('.')[0]!, 'base64url').toString('utf8'));
    expect(keys.body.keys).toEqual([expect.objectContaining({ kty: 'EC', crv: 'P-256', kid: header.kid })]);
  });
});

describe('the OIDC provider: the code flow with a password', () => {
  it('sends /authorize to the password page, which names the auth request in a header', async () => {
    const { authRequestId, loginPath } = await authorize(controller());

    expect(loginPath).toBe(`/oidc/login/username?authRequestID=${authRequestId}`);
    const page = await controller().call('GET', loginPath);
    expect(page.status).toBe(200);
    expect(page.headers['auth-request-id']).toBe(authRequestId);
  });

  it('logs in, gives a code once, and exchanges it once for tokens with the reference claims', async () => {
    const user = await userUnder('default', 'oidc-flow-user');
    const { authRequestId, verifier, state } = await authorize(controller());
    const login = await passwordLogin(controller(), authRequestId, user.username, user.password);
    expect(login.status).toBe(302);
    expect(login.headers.location).toBe(`${controller().origin}/oidc/authorize/callback?id=${authRequestId}`);

    const callback = await controller().call('GET', `/oidc/authorize/callback?id=${authRequestId}`);
    const back = new URL(String(callback.headers.location));
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get('state')).toBe(state);
    const again = await controller().call('GET', `/oidc/authorize/callback?id=${authRequestId}`);
    expect(again.status).toBe(400);

    const code = back.searchParams.get('code')!;
    const tokens = await exchangeCode(controller(), code, verifier);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', expires_in: 1800 });
    const access = claimsOf(tokens.body.access_token);
    expect(access).toMatchObject({
      iss: `${controller().origin}/oidc`,
      sub: user.identityId,
      aud: ['openziti'],
      z_t: 'a',
      z_authid: user.authenticatorId,
      z_ia: false,
      client_id: 'openziti',
    });
    expect(access.z_asid).toEqual(expect.any(String));
    expect(Number(access.exp) - Number(access.iat)).toBe(1800);
    const refresh = claimsOf(tokens.body.refresh_token);
    expect(refresh).toMatchObject({ z_t: 'r', z_asid: access.z_asid, sub: user.identityId });
    expect(Number(refresh.exp) - Number(refresh.iat)).toBe(86_400);

    const reused = await exchangeCode(controller(), code, verifier);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
  });

  it('refuses a wrong verifier, a wrong password, and an unknown auth request', async () => {
    const user = await userUnder('default', 'oidc-refusals-user');
    const { authRequestId } = await authorize(controller());
    const wrongPassword = await passwordLogin(controller(), authRequestId, user.username, 'not-the-password');
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body.error.code).toBe('INVALID_AUTH');

    const code = await codeAfterLogin(
      controller(),
      await passwordLogin(controller(), authRequestId, user.username, user.password),
    );
    const wrongVerifier = await exchangeCode(controller(), code, 'x'.repeat(43));
    expect(wrongVerifier.body.error).toBe('invalid_grant');

    const unknown = await passwordLogin(controller(), 'no-such-request', user.username, user.password);
    expect(unknown.status).toBe(404);
  });

  it('refreshes with the refresh token once, the C SDK way (Basic client, empty secret)', async () => {
    const user = await userUnder('default', 'oidc-refresh-user');
    const tokens = await oidcPasswordTokens(controller(), user.username, user.password);
    const basic = `Basic ${Buffer.from('openziti:').toString('base64')}`;
    const refresh = (token: string) =>
      controller().call('POST', '/oidc/oauth/token', {
        ...form({ client_id: 'openziti', grant_type: 'refresh_token', refresh_token: token }),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      });

    const first = await refresh(tokens.refreshToken);
    expect(first.status).toBe(200);
    expect(claimsOf(first.body.access_token).z_asid).toBe(claimsOf(tokens.accessToken).z_asid);
    const spent = await refresh(tokens.refreshToken);
    expect(spent.body.error).toBe('invalid_grant');
    const next = await refresh(first.body.refresh_token);
    expect(next.status).toBe(200);
  });
});
