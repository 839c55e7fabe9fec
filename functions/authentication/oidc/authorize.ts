import { randomBytes } from 'node:crypto';
import type { Operation } from '#shared/http/operation.ts';
import { isOidcClientId, oidcIssuerOf } from '#shared/oidc/oidc-tokens.ts';
import { AUTH_REQUEST_SECONDS, putAuthRequest } from '#shared/store/oidc-items.ts';
import { oauthError, oidcParams, param, redirect } from './oidc-request.ts';

/**
 * Where a public client may be sent back with its code when the configuration names nothing else, as the reference
 * allows them (`docs/oidc-design.md`, A): the custom scheme, and the loopback hosts on any port (an SDK listens
 * nowhere; it reads the code from the redirect's `Location`).
 */
const REDIRECT_URIS = [
  /^openziti:\/\/auth\/callback$/,
  /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d{1,5})?\/auth\/callback$/,
];

export function isAllowedRedirectUri(uri: string): boolean {
  return REDIRECT_URIS.some((pattern) => pattern.test(uri));
}

/** A PKCE S256 challenge: the base64url SHA-256 of a verifier, 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** The login pages an auth request may start at (`method` of `/authorize`), by the name the reference takes. */
const LOGIN_PAGES: Readonly<Record<string, string>> = {
  password: 'username',
  username: 'username',
  updb: 'username',
  cert: 'cert',
  'ext-jwt': 'ext-jwt',
};

/** The longest `state` and `nonce` kept: an SDK's are a few dozen characters. */
const MAX_ECHOED = 512;

/**
 * `GET|POST /oidc/authorize`: starts an auth request of the code flow with PKCE (S256, required) for one of the two
 * public clients, and sends the client to its login page: the `method` it asked for, else `cert` when the TLS
 * handshake carried a certificate, else the password page (`authRequestID` in the `Location`, which the C SDK reads).
 * A request whose client or redirect URI is not known is answered here (400) and never redirected; the rest of its
 * errors go back to the redirect URI, as OAuth has them (`error`, `state`).
 */
export const oidcAuthorize: Operation = async (request, deps) => {
  const params = oidcParams(request);
  const clientId = param(params, 'client_id');
  const redirectUri = param(params, 'redirect_uri');
  if (!isOidcClientId(clientId)) return oauthError('invalid_client', 'client_id must be openziti or native');
  if (redirectUri === undefined || !isAllowedRedirectUri(redirectUri)) {
    return oauthError('invalid_request', 'redirect_uri is not one this client may use');
  }
  const state = param(params, 'state');
  const refuse = (error: string, description: string) => {
    const back = new URL(redirectUri);
    back.searchParams.set('error', error);
    back.searchParams.set('error_description', description);
    if (state !== undefined) back.searchParams.set('state', state);
    return redirect(back.toString());
  };
  if (param(params, 'response_type') !== 'code')
    return refuse('unsupported_response_type', 'response_type must be code');
  const scopes = (param(params, 'scope') ?? '').split(' ').filter((scope) => scope !== '');
  if (!scopes.includes('openid')) return refuse('invalid_scope', 'scope must include openid');
  const codeChallenge = param(params, 'code_challenge');
  if (codeChallenge === undefined || param(params, 'code_challenge_method') !== 'S256') {
    return refuse('invalid_request', 'PKCE is required: code_challenge with code_challenge_method S256');
  }
  if (!S256_CHALLENGE.test(codeChallenge)) return refuse('invalid_request', 'code_challenge is not an S256 challenge');
  const nonce = param(params, 'nonce');
  if ((state?.length ?? 0) > MAX_ECHOED || (nonce?.length ?? 0) > MAX_ECHOED) {
    return refuse('invalid_request', `state and nonce are at most ${MAX_ECHOED} characters`);
  }
  const method = param(params, 'method');
  const page = (method && LOGIN_PAGES[method]) ?? (request.clientCertPem ? 'cert' : 'username');

  const issuer = oidcIssuerOf(request.baseUrl);
  const id = randomBytes(24).toString('base64url');
  await putAuthRequest(deps.store, {
    id,
    clientId,
    redirectUri,
    codeChallenge,
    state,
    nonce,
    scopes,
    issuer,
    expiresAtEpoch: Math.floor(deps.now().getTime() / 1000) + AUTH_REQUEST_SECONDS,
  });
  return redirect(`${issuer}/login/${page}?authRequestID=${id}`);
};
