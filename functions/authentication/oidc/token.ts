import { createHash } from 'node:crypto';
import { liveSessionOfToken, oidcSessionToken, owesSecondFactor } from '#shared/auth/api-session-store.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import type { Operation, OperationRequest } from '#shared/http/operation.ts';
import {
  type OidcSessionFacts,
  type OidcTokenClaims,
  sessionFactsOf,
  signAccessToken,
  signIdToken,
  signRefreshToken,
  verifyOidcToken,
} from '#shared/oidc/oidc-tokens.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { authRequestOfCode, putRefreshOp, spendCodeOps, spendRefreshOp } from '#shared/store/oidc-items.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { codeHashOf } from './callback.ts';
import { type OidcParams, oauthError, oidcParams, param } from './oidc-request.ts';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

/**
 * The client a token request names: `client_id`, or the user of an `Authorization: Basic` header (the C SDK sends its
 * client so, with an empty secret: both clients are public, so no secret is checked).
 */
function clientIdOf(request: OperationRequest, params: OidcParams): string | undefined {
  const basic = /^Basic\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  if (basic) {
    const user = Buffer.from(basic, 'base64').toString('utf8').split(':')[0];
    if (user) return decodeURIComponent(user);
  }
  return param(params, 'client_id');
}

/** A grant refused: 400 `invalid_grant`, the one error a client of the token endpoint acts on (it logs in again). */
const invalidGrant = (description: string) => oauthError('invalid_grant', description);

/**
 * The session a grant stands on, as a request's would be judged: live, not revoked (the identity enabled, not
 * locked, its sessions not ended since, the login's authenticator still there), every factor given; its activity is
 * refreshed as a request's is. Undefined when not.
 */
async function liveSessionOf(deps: Deps, facts: Pick<OidcSessionFacts, 'apiSessionId' | 'identityId'>) {
  const token = await oidcSessionToken(deps, facts.apiSessionId, facts.identityId);
  const live = await liveSessionOfToken(deps, token, { partialPasses: false });
  return live && !owesSecondFactor(live.session) ? live : undefined;
}

/**
 * The tokens of a grant, with the writes that make it good: the refresh token's `jti` kept as live, committed with
 * `spend` (the code or the refresh token the grant used) in one transaction, so a grant used twice at once issues
 * once. A spend that finds its grant gone answers `invalid_grant`.
 */
async function issued(
  request: OperationRequest,
  deps: Deps,
  issuer: string,
  facts: OidcSessionFacts,
  nonce: string | undefined,
  spend: readonly WriteOp[],
): Promise<HttpResult> {
  const [access, refresh, id] = await Promise.all([
    signAccessToken(deps, issuer, facts),
    signRefreshToken(deps, issuer, facts),
    signIdToken(deps, issuer, facts, nonce),
  ]);
  try {
    await deps.store.transact([...spend, putRefreshOp(deps.store, refresh.jti, facts.apiSessionId, refresh.exp)]);
  } catch (error) {
    if (error instanceof ApiError) return invalidGrant(error.message);
    throw error;
  }
  request.logger.info('oidc tokens issued', { apiSessionId: facts.apiSessionId, identityId: facts.identityId });
  return {
    statusCode: 200,
    body: {
      access_token: access.token,
      token_type: 'Bearer',
      refresh_token: refresh.token,
      expires_in: access.exp - Math.floor(deps.now().getTime() / 1000),
      id_token: id.token,
      scope: facts.scopes.join(' '),
    },
    headers: { 'cache-control': 'no-store', pragma: 'no-cache' },
  };
}

/** The base64url SHA-256 of a PKCE verifier: what its S256 challenge must be. */
function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** A verifier as RFC 7636 has them: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** `authorization_code`: the code of a finished auth request, once, with its PKCE verifier, client and redirect URI. */
async function codeGrant(request: OperationRequest, deps: Deps, params: OidcParams): Promise<HttpResult> {
  const code = param(params, 'code');
  const verifier = param(params, 'code_verifier');
  if (code === undefined || verifier === undefined)
    return oauthError('invalid_request', 'code and code_verifier are required');
  const codeHash = codeHashOf(code);
  const authRequest = await authRequestOfCode(deps.store, codeHash, deps.now());
  if (!authRequest?.login) return invalidGrant('the code is unknown, expired or already used');
  const clientId = clientIdOf(request, params);
  if (clientId !== undefined && clientId !== authRequest.clientId)
    return invalidGrant('the code was issued to another client');
  const redirectUri = param(params, 'redirect_uri');
  if (redirectUri !== undefined && redirectUri !== authRequest.redirectUri) {
    return invalidGrant('redirect_uri differs from the auth request');
  }
  if (!VERIFIER.test(verifier) || s256(verifier) !== authRequest.codeChallenge) {
    return invalidGrant('code_verifier does not match the code challenge');
  }
  const { login } = authRequest;
  if (!(await liveSessionOf(deps, login))) return invalidGrant('the login is no longer valid');
  const facts: OidcSessionFacts = {
    ...login,
    clientId: authRequest.clientId === 'native' ? 'native' : 'openziti',
    scopes: authRequest.scopes,
  };
  return issued(
    request,
    deps,
    authRequest.issuer,
    facts,
    authRequest.nonce,
    spendCodeOps(deps.store, codeHash, authRequest.id),
  );
}

/**
 * A refresh token presented, verified and unspent, its session live: spent by the grant that uses it. One already
 * spent (a copy replayed, or a refresh that raced another) ends nothing and is refused; only the newest refresh token
 * of a session is ever good.
 */
async function refreshGrantOf(
  request: OperationRequest,
  deps: Deps,
  params: OidcParams,
  refreshToken: string,
): Promise<HttpResult> {
  const claims: OidcTokenClaims | undefined = await verifyOidcToken(deps, refreshToken, 'r');
  if (!claims) return invalidGrant('the refresh token is not valid');
  const clientId = clientIdOf(request, params);
  if (clientId !== undefined && clientId !== claims.client_id)
    return invalidGrant("the refresh token is another client's");
  const facts = sessionFactsOf(claims);
  if (!(await liveSessionOf(deps, facts))) return invalidGrant('the session of the refresh token has ended');
  return issued(request, deps, claims.iss, facts, undefined, [
    spendRefreshOp(deps.store, claims.jti, facts.apiSessionId),
  ]);
}

/** `refresh_token`: a new access, refresh and ID token for a live session; the refresh token used is spent. */
async function refreshGrant(request: OperationRequest, deps: Deps, params: OidcParams): Promise<HttpResult> {
  const refreshToken = param(params, 'refresh_token');
  if (refreshToken === undefined) return oauthError('invalid_request', 'refresh_token is required');
  return refreshGrantOf(request, deps, params, refreshToken);
}

/**
 * `POST /oidc/oauth/token`: the code's exchange, a refresh, or a token exchange (RFC 8693, how the Go SDK refreshes).
 * Every grant checks the session as a request would (revoked, locked, disabled, idle: `invalid_grant`) and touches
 * its activity.
 */
export const oidcToken: Operation = async (request, deps) => {
  const params = oidcParams(request);
  const grantType = param(params, 'grant_type');
  if (grantType === 'authorization_code') return codeGrant(request, deps, params);
  if (grantType === 'refresh_token') return refreshGrant(request, deps, params);
  if (grantType === TOKEN_EXCHANGE) return oauthError('unsupported_grant_type', 'token exchange is not served yet');
  return oauthError('unsupported_grant_type', 'grant_type must be authorization_code, refresh_token or token exchange');
};
