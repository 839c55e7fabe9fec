import { createHash, randomBytes } from 'node:crypto';
import type { BenchClient, BenchResponse } from './bench-client.ts';
import { expectStatus } from './identity-scenarios.ts';

/**
 * The OIDC provider's flows as the SDKs send them, request by request (`docs/oidc-design.md`, B), for the bench to
 * measure: the C SDK's certificate login and refresh, the Go SDK's password login with or without TOTP. Each request
 * is one invocation of the authentication function.
 */

/** The C SDK's redirect URI (`library/oidc.c`, `default_cb_url`); the Go SDK's is on port 8080. */
const C_SDK_REDIRECT_URI = 'http://localhost:20314/auth/callback';
const GO_SDK_REDIRECT_URI = 'http://localhost:8080/auth/callback';

/** The tokens a login or a refresh leaves an SDK holding. */
export interface OidcTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** The header an API request carries an access token in. */
export const bearer = (accessToken: string): Readonly<Record<string, string>> => ({
  authorization: `Bearer ${accessToken}`,
});

/** A form body as the SDKs post one. */
function form(fields: Readonly<Record<string, string>>): {
  rawBody: string;
  headers: Readonly<Record<string, string>>;
} {
  return {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  };
}

function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(40).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The path and query of a redirect's `Location`, to follow it on the bench's controller. */
function locationOf(response: BenchResponse, what: string): URL {
  expectStatus(response, 302, what);
  const location = response.headers.location;
  if (typeof location !== 'string') throw new Error(`${what}: no Location`);
  return new URL(location, 'https://controller.invalid');
}

const pathOf = (url: URL) => `${url.pathname}${url.search}`;

function tokensOf(response: BenchResponse, what: string): OidcTokens {
  const body = expectStatus(response, 200, what).body as { access_token?: string; refresh_token?: string };
  if (!body.access_token || !body.refresh_token) throw new Error(`${what}: no access or refresh token`);
  return { accessToken: body.access_token, refreshToken: body.refresh_token };
}

/** The code in the callback's redirect to the redirect URI. */
async function codeOfCallback(client: BenchClient, callback: URL): Promise<string> {
  const back = locationOf(await client.call('GET', pathOf(callback)), 'callback');
  const code = back.searchParams.get('code');
  if (!code) throw new Error('callback: no code');
  return code;
}

/**
 * The C SDK's certificate login (`library/oidc.c`: `oidc_client_start`, `auth_cb`, `login_cb`, `code_cb`,
 * `request_token`), four requests over the device's client certificate: `POST /oidc/authorize` with its parameters in
 * the query (a 302 to the login page, `authRequestID` in its `Location`), `POST /oidc/login/cert?id=` with a JSON
 * body (its SDK and environment), `GET` the callback its 302 names, and `POST /oidc/oauth/token` with the code and the
 * PKCE verifier as a form.
 */
export async function cSdkCertLogin(device: BenchClient): Promise<OidcTokens> {
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(30).toString('base64url');
  const query = new URLSearchParams({
    client_id: 'openziti',
    scope: 'openid offline_access',
    response_type: 'code',
    redirect_uri: C_SDK_REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    audience: 'openziti',
  });
  const page = locationOf(await device.call('POST', `/oidc/authorize?${query}`), 'authorize');
  const id = page.searchParams.get('authRequestID');
  if (!id) throw new Error('authorize: no authRequestID');
  const login = await device.call('POST', `/oidc/login/cert?id=${encodeURIComponent(id)}`, {
    body: {
      sdkInfo: { type: 'ziti-sdk-c', version: '1.18.2', appId: 'bench', appVersion: '1' },
      envInfo: { os: 'Linux', arch: 'x86_64', osRelease: '6', osVersion: '6' },
    },
  });
  const code = await codeOfCallback(device, locationOf(login, 'login/cert'));
  const token = await device.call(
    'POST',
    '/oidc/oauth/token',
    form({
      state,
      code,
      grant_type: 'authorization_code',
      code_verifier: verifier,
      client_id: 'openziti',
      redirect_uri: C_SDK_REDIRECT_URI,
    }),
  );
  return tokensOf(token, 'token');
}

/**
 * The C SDK's refresh (`library/oidc.c`, `refresh_time_cb`): `POST /oidc/oauth/token`, the client `openziti` in a
 * Basic header with an empty secret and in the form, `grant_type=refresh_token`. The answer's refresh token replaces
 * the one spent.
 */
export async function cSdkRefresh(device: BenchClient, refreshToken: string): Promise<OidcTokens> {
  const body = form({ client_id: 'openziti', grant_type: 'refresh_token', refresh_token: refreshToken });
  const answer = await device.call('POST', '/oidc/oauth/token', {
    ...body,
    headers: { ...body.headers, authorization: `Basic ${Buffer.from('openziti:').toString('base64')}` },
  });
  return tokensOf(answer, 'refresh');
}

/**
 * The Go SDK's password login (`sdk-golang edge-apis/clients_shared.go`), five requests, six with TOTP:
 * `GET /oidc/authorize` (client `native`), following its 302 to the login page (`GET`, the `auth-request-id` header),
 * `POST /oidc/login/password` as a form; when the answer says `totp-required`, `POST /oidc/login/totp` as JSON with
 * `code()`; then `GET` the callback and `POST /oidc/oauth/token` with the code and the verifier as a form.
 */
export async function goSdkPasswordLogin(
  client: BenchClient,
  username: string,
  password: string,
  code?: () => Promise<string>,
): Promise<OidcTokens> {
  const { verifier, challenge } = pkcePair();
  const query = new URLSearchParams({
    client_id: 'native',
    response_type: 'code',
    scope: 'openid offline_access',
    state: randomBytes(16).toString('hex'),
    nonce: randomBytes(16).toString('hex'),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    redirect_uri: GO_SDK_REDIRECT_URI,
  });
  const page = locationOf(await client.call('GET', `/oidc/authorize?${query}`), 'authorize');
  const shown = expectStatus(await client.call('GET', pathOf(page)), 200, 'login page');
  const id = shown.headers['auth-request-id'];
  if (typeof id !== 'string') throw new Error('login page: no auth-request-id');
  let login = await client.call('POST', '/oidc/login/password', form({ id, username, password }));
  if (login.status === 200 && login.headers['totp-required'] === 'true') {
    if (!code) throw new Error('login/password: TOTP required, no code given');
    login = await client.call('POST', '/oidc/login/totp', { body: { id, code: await code() } });
  }
  const issued = await codeOfCallback(client, locationOf(login, 'login'));
  const token = await client.call(
    'POST',
    '/oidc/oauth/token',
    form({
      grant_type: 'authorization_code',
      client_id: 'native',
      code_verifier: verifier,
      code: issued,
      redirect_uri: GO_SDK_REDIRECT_URI,
    }),
  );
  return tokensOf(token, 'token');
}
