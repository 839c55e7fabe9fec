import { createHash, randomBytes } from 'node:crypto';
import type { HttpResponse, RequestOptions } from './https-client.ts';
import type { TestController } from './test-controller.ts';

/**
 * An OIDC client of the controller's provider, doing what the SDKs do request by request (`docs/oidc-design.md`, B):
 * `/authorize` with PKCE, a login step, the callback, the token endpoint. Each step is its own call, so tests can stop
 * anywhere and look at the answer.
 */

export const REDIRECT_URI = 'http://localhost:20314/auth/callback';

/** A PKCE pair: the verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A form body as the SDKs post it. */
export function form(fields: Readonly<Record<string, string | readonly string[]>>): RequestOptions {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    for (const item of typeof value === 'string' ? [value] : value) body.append(name, item);
  }
  return { rawBody: body.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
}

/** The path and query of a `Location` (absolute or not), to follow it on the test controller. */
export function pathOf(location: string | string[] | undefined): string {
  if (typeof location !== 'string') throw new Error(`no single Location: ${String(location)}`);
  const url = new URL(location, 'https://controller.invalid');
  return `${url.pathname}${url.search}`;
}

export interface Authorized {
  readonly authRequestId: string;
  readonly verifier: string;
  readonly state: string;
  /** The login page `/authorize` sent the client to. */
  readonly loginPath: string;
}

/** `GET /oidc/authorize` as the C SDK sends it (client `openziti`, S256), answered with a 302 to a login page. */
export async function authorize(
  controller: TestController,
  options: { clientId?: string; method?: string; cert?: RequestOptions['cert'] } = {},
): Promise<Authorized> {
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(8).toString('hex');
  const query = new URLSearchParams({
    client_id: options.clientId ?? 'openziti',
    scope: 'openid offline_access',
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    ...(options.method ? { method: options.method } : {}),
  });
  const answer = await controller.call('GET', `/oidc/authorize?${query}`, options.cert ? { cert: options.cert } : {});
  if (answer.status !== 302) throw new Error(`authorize answered ${answer.status}: ${answer.text}`);
  const loginPath = pathOf(answer.headers.location);
  const authRequestId = new URL(loginPath, 'https://x').searchParams.get('authRequestID');
  if (!authRequestId) throw new Error(`no authRequestID in ${loginPath}`);
  return { authRequestId, verifier, state, loginPath };
}

/** `POST /oidc/login/password` with a form, as the Go SDK posts it. */
export function passwordLogin(
  controller: TestController,
  authRequestId: string,
  username: string,
  password: string,
): Promise<HttpResponse> {
  return controller.call('POST', '/oidc/login/password', form({ id: authRequestId, username, password }));
}

/** Follows a login's 302 to the callback and returns the code its 302 carries to the redirect URI. */
export async function codeAfterLogin(controller: TestController, login: HttpResponse): Promise<string> {
  if (login.status !== 302) throw new Error(`the login answered ${login.status}: ${login.text}`);
  const callback = await controller.call('GET', pathOf(login.headers.location));
  if (callback.status !== 302) throw new Error(`the callback answered ${callback.status}: ${callback.text}`);
  const back = new URL(String(callback.headers.location));
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code in ${back}`);
  return code;
}

/** `POST /oidc/oauth/token` with the code and its verifier. */
export function exchangeCode(
  controller: TestController,
  code: string,
  verifier: string,
  clientId = 'openziti',
): Promise<HttpResponse> {
  return controller.call(
    'POST',
    '/oidc/oauth/token',
    form({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
    }),
  );
}

/** The tokens of a code exchange. */
export interface OidcTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly idToken: string;
  readonly expiresIn: number;
}

/** A whole password login through the provider: the tokens, as an SDK holds them. */
export async function oidcPasswordTokens(
  controller: TestController,
  username: string,
  password: string,
  clientId = 'openziti',
): Promise<OidcTokens> {
  const { authRequestId, verifier } = await authorize(controller, { clientId });
  const code = await codeAfterLogin(controller, await passwordLogin(controller, authRequestId, username, password));
  const answer = await exchangeCode(controller, code, verifier, clientId);
  if (answer.status !== 200) throw new Error(`the token endpoint answered ${answer.status}: ${answer.text}`);
  return {
    accessToken: answer.body.access_token,
    refreshToken: answer.body.refresh_token,
    idToken: answer.body.id_token,
    expiresIn: answer.body.expires_in,
  };
}

/** A JWT's claims, unverified (tests read what a token says). */
export function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
}

/** RFC 8693's token type identifiers. */
export const TOKEN_TYPE = {
  access: 'urn:ietf:params:oauth:token-type:access_token',
  refresh: 'urn:ietf:params:oauth:token-type:refresh_token',
  id: 'urn:ietf:params:oauth:token-type:id_token',
} as const;

/** `Authorization: Basic` for a public client, with the empty secret the SDKs send. */
export function basicClient(clientId: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:`).toString('base64')}`;
}

/** A form post to an endpoint of the provider, with the client in a Basic header when one is given. */
export function postForm(
  controller: TestController,
  path: string,
  fields: Readonly<Record<string, string>>,
  basicClientId?: string,
): Promise<HttpResponse> {
  const body = form(fields);
  return controller.call('POST', path, {
    ...body,
    headers: { ...body.headers, ...(basicClientId ? { authorization: basicClient(basicClientId) } : {}) },
  });
}

/**
 * One token exchange as the Go SDK sends it (`sdk-golang edge-apis/clients_shared.go: exchangeTokens`, through
 * zitadel's `tokenexchange.ExchangeToken`): client `native` in a Basic header with an empty secret, and the form
 * zitadel's encoder writes, empty actor fields and scope included.
 */
export function exchangeToken(
  controller: TestController,
  subjectToken: string,
  subjectTokenType: string,
  requestedTokenType: string,
  clientId = 'native',
): Promise<HttpResponse> {
  return postForm(
    controller,
    '/oidc/oauth/token',
    {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: subjectToken,
      subject_token_type: subjectTokenType,
      actor_token: '',
      actor_token_type: '',
      scope: '',
      requested_token_type: requestedTokenType,
    },
    clientId,
  );
}

/**
 * The Go SDK's refresh: an exchange of its refresh token (its access token when it holds none) for new tokens, then
 * one of the same subject for an ID token, read from `access_token`. Throws on any answer the SDK would fail on.
 */
export async function goSdkRefresh(controller: TestController, tokens: OidcTokens): Promise<OidcTokens> {
  const [subject, subjectType, requested] = tokens.refreshToken
    ? [tokens.refreshToken, TOKEN_TYPE.refresh, TOKEN_TYPE.refresh]
    : [tokens.accessToken, TOKEN_TYPE.access, TOKEN_TYPE.access];
  const first = await exchangeToken(controller, subject, subjectType, requested);
  if (first.status !== 200) throw new Error(`the exchange answered ${first.status}: ${first.text}`);
  const id = await exchangeToken(controller, subject, subjectType, TOKEN_TYPE.id);
  if (id.status !== 200) throw new Error(`the ID token exchange answered ${id.status}: ${id.text}`);
  return {
    accessToken: first.body.access_token,
    refreshToken: first.body.refresh_token ?? '',
    idToken: id.body.access_token,
    expiresIn: first.body.expires_in,
  };
}

/** `grant_type=refresh_token` as the C SDK sends it (client in Basic with an empty secret, and in the form). */
export function refreshGrant(
  controller: TestController,
  refreshToken: string,
  clientId = 'openziti',
): Promise<HttpResponse> {
  return postForm(
    controller,
    '/oidc/oauth/token',
    { client_id: clientId, grant_type: 'refresh_token', refresh_token: refreshToken },
    clientId,
  );
}

/** The primary login pages an auth request may be sent to (`/oidc/login/<method>`). */
export type LoginMethod = 'password' | 'username' | 'cert' | 'ext-jwt';

/**
 * `POST /oidc/login/<method>?id=` with a JSON body, as the C SDK posts its cert and ext-jwt logins (`sdkInfo`,
 * `envInfo`, `configTypes`; the auth request in the query), with its client certificate or its external JWT.
 */
export function jsonLogin(
  controller: TestController,
  method: LoginMethod,
  authRequestId: string,
  body: Record<string, unknown> = {},
  options: { cert?: RequestOptions['cert']; bearer?: string; sourceAddress?: string } = {},
): Promise<HttpResponse> {
  return controller.call('POST', `/oidc/login/${method}?id=${encodeURIComponent(authRequestId)}`, {
    body,
    ...(options.cert ? { cert: options.cert } : {}),
    ...(options.bearer ? { headers: { authorization: `Bearer ${options.bearer}` } } : {}),
    ...(options.sourceAddress ? { sourceAddress: options.sourceAddress } : {}),
  });
}

/** The second-factor steps of a login, by path under `/oidc/login`. */
export type SecondFactorStep = 'totp' | 'totp/enroll' | 'totp/enroll/verify';

/**
 * A second-factor step (`/oidc/login/totp…`) with `{id, ...fields}`: as JSON (the Go SDK) or as a form (the C SDK).
 */
export function secondFactorStep(
  controller: TestController,
  step: SecondFactorStep,
  authRequestId: string,
  fields: Readonly<Record<string, string>> = {},
  options: { method?: 'POST' | 'DELETE'; as?: 'json' | 'form'; sourceAddress?: string } = {},
): Promise<HttpResponse> {
  const values = { id: authRequestId, ...fields };
  return controller.call(options.method ?? 'POST', `/oidc/login/${step}`, {
    ...(options.as === 'form' ? form(values) : { body: values }),
    ...(options.sourceAddress ? { sourceAddress: options.sourceAddress } : {}),
  });
}

/** `GET /oidc/login/auth-queries?id=`. */
export function authQueries(controller: TestController, authRequestId: string): Promise<HttpResponse> {
  return controller.call('GET', `/oidc/login/auth-queries?id=${encodeURIComponent(authRequestId)}`);
}
