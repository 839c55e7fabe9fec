import type { ApiSession } from '#shared/auth/api-session.ts';
import { getApiSessionById, owesSecondFactor } from '#shared/auth/api-session-store.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import type { OperationRequest } from '#shared/http/operation.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { type OidcAuthRequest, readAuthRequest } from '#shared/store/oidc-items.ts';

/**
 * What every OIDC endpoint reads of its request: the parameters (query, then an HTML form's or a JSON body's fields:
 * the SDKs send either), the auth request they name, and the OAuth answers.
 */

/** A request's parameters, by name: every value a name was given (forms and queries repeat `configTypes`). */
export type OidcParams = ReadonlyMap<string, readonly string[]>;

/** A value as parameter text: strings, numbers and booleans as they read, arrays item by item; objects not at all. */
function textsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function add(params: Map<string, string[]>, name: string, value: unknown) {
  const texts = textsOf(value);
  if (texts.length > 0) params.set(name, [...(params.get(name) ?? []), ...texts]);
}

/** The parameters of the query and of the body, the body's first: a form's when it is one, a JSON object's else. */
export function oidcParams(request: OperationRequest): OidcParams {
  const params = new Map<string, string[]>();
  const type = request.headers['content-type'] ?? '';
  if (/^\s*application\/x-www-form-urlencoded/i.test(type) && request.rawBody !== undefined) {
    for (const [name, value] of new URLSearchParams(request.rawBody)) add(params, name, value);
  } else if (request.body && typeof request.body === 'object' && !Array.isArray(request.body)) {
    for (const [name, value] of Object.entries(request.body)) add(params, name, value);
  }
  for (const [name, values] of Object.entries(request.query)) for (const value of values) add(params, name, value);
  return params;
}

/** The first value of a parameter, undefined when absent or empty. */
export function param(params: OidcParams, name: string): string | undefined {
  const value = params.get(name)?.[0];
  return value === undefined || value === '' ? undefined : value;
}

/** The headers of every answer that carries a token or judges one: never cached (RFC 6749 5.1). */
export const NO_STORE: Readonly<Record<string, string>> = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** An OAuth error answer (RFC 6749 5.2): `{error, error_description}`, never cached. */
export function oauthError(error: string, description: string, statusCode = 400): HttpResult {
  return { statusCode, body: { error, error_description: description }, headers: NO_STORE };
}

/**
 * The client a request to the token, revocation or introspection endpoint names: `client_id`, or the user of an
 * `Authorization: Basic` header (the C SDK and the Go SDK's token exchange send their client so, with an empty
 * secret: both clients are public, so no secret is checked).
 */
export function clientIdOf(request: OperationRequest, params: OidcParams): string | undefined {
  const basic = /^Basic\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  if (basic) {
    const user = Buffer.from(basic, 'base64').toString('utf8').split(':')[0];
    if (user) return safeDecode(user);
  }
  return param(params, 'client_id');
}

/** A Basic user as RFC 6749 2.3.1 has it form-encoded; taken as sent when it is not. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** A 302 to `location`. */
export function redirect(location: string): HttpResult {
  return { statusCode: 302, body: '', headers: { location, 'cache-control': 'no-store' } };
}

/** The auth request id a login step names: `id`, or `authRequestID` as the login pages' links carry it. */
function authRequestIdOf(params: OidcParams): string | undefined {
  return param(params, 'id') ?? param(params, 'authRequestID');
}

/** The auth request a step names, while it lives; undefined when it names none, or one expired or unknown. */
export async function namedAuthRequest(deps: Deps, params: OidcParams): Promise<OidcAuthRequest | undefined> {
  const id = authRequestIdOf(params);
  return id === undefined ? undefined : readAuthRequest(deps.store, id, deps.now());
}

/** The answer to a step naming no live auth request. */
export function unknownAuthRequest(): HttpResult {
  return oauthError('invalid_request', 'the auth request is unknown, expired or already finished', 404);
}

/** Where a logged-in auth request goes next: its callback, which answers with the code. */
export function callbackLocation(request: OidcAuthRequest): string {
  return `${request.issuer}/authorize/callback?id=${encodeURIComponent(request.id)}`;
}

/**
 * The API session an auth request's login opened, as stored now (its second factors given or not); undefined when
 * it was not logged into, or the session is gone (ended, logged out, idle).
 */
export async function sessionOfAuthRequest(deps: Deps, request: OidcAuthRequest): Promise<ApiSession | undefined> {
  if (!request.login) return undefined;
  const session = await getApiSessionById(deps, request.login.apiSessionId);
  return session?.identityId === request.login.identityId ? session : undefined;
}

/** Whether a login's session has every factor it owes. */
export function isComplete(session: ApiSession): boolean {
  return !owesSecondFactor(session);
}
