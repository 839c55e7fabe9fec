import { createHash } from 'node:crypto';
import { oidcRefreshStartOp } from '#shared/auth/api-session-store.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import type { Operation, OperationRequest } from '#shared/http/operation.ts';
import {
  type OidcSessionFacts,
  type OidcTokenClaims,
  sessionFactsOf,
  verifyOidcToken,
} from '#shared/oidc/oidc-tokens.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { authRequestOfCode, spendCodeOps } from '#shared/store/oidc-items.ts';
import { codeHashOf } from './callback.ts';
import { clientIdOf, NO_STORE, type OidcParams, oauthError, oidcParams, param } from './oidc-request.ts';
import { liveSessionOf, refreshRotation } from './oidc-sessions.ts';
import { TOKEN_EXCHANGE, tokenExchangeGrant } from './token-exchange.ts';
import { invalidGrant, issueTokens, type RefreshCommit, secondsUntil } from './token-issue.ts';

/** The answer of the code's exchange and of `refresh_token` (RFC 6749 5.1, with OIDC's `id_token`). */
async function issued(
  deps: Deps,
  issuer: string,
  facts: OidcSessionFacts,
  nonce: string | undefined,
  commit: RefreshCommit,
): Promise<HttpResult> {
  const tokens = await issueTokens(deps, issuer, facts, commit, { nonce });
  if ('refused' in tokens) return invalidGrant(tokens.refused);
  return {
    statusCode: 200,
    body: {
      access_token: tokens.access.token,
      token_type: 'Bearer',
      refresh_token: tokens.refresh.token,
      expires_in: secondsUntil(deps, tokens.access.exp),
      id_token: tokens.id?.token,
      scope: facts.scopes.join(' '),
    },
    headers: NO_STORE,
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
  const live = await liveSessionOf(deps, login);
  if (!live) return invalidGrant('the login is no longer valid');
  const facts: OidcSessionFacts = {
    ...login,
    clientId: authRequest.clientId === 'native' ? 'native' : 'openziti',
    scopes: authRequest.scopes,
  };
  // The code is spent and the session given its first refresh token in one transaction: a code is good once.
  const spendCode: RefreshCommit = async (refreshJti) => {
    try {
      await deps.store.transact([
        ...spendCodeOps(deps.store, codeHash, authRequest.id),
        oidcRefreshStartOp(deps, live.session, refreshJti),
      ]);
      request.logger.info('oidc code exchanged', { apiSessionId: login.apiSessionId, identityId: login.identityId });
      return undefined;
    } catch (error) {
      if (error instanceof ApiError) return error.message;
      throw error;
    }
  };
  return issued(deps, authRequest.issuer, facts, authRequest.nonce, spendCode);
}

/**
 * A refresh token presented, verified and unspent, its session live: spent by the grant that uses it, in the write that
 * refreshes the session's activity. One already spent (a copy replayed, or a refresh that raced another) ends nothing
 * and is refused; only the newest refresh token of a session is ever good.
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
  // Read without its touch: the rotation below refreshes the session's activity in its own write.
  const live = await liveSessionOf(deps, facts, 'byCaller');
  if (!live) return invalidGrant('the session of the refresh token has ended');
  const answer = await issued(deps, claims.iss, facts, undefined, refreshRotation(deps, live.session, claims.jti));
  // Every device refreshes every 20 minutes or so: its success is logged as the legacy session refresh's read is.
  return answer.statusCode === 200 ? { ...answer, routine: true } : answer;
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
  if (grantType === TOKEN_EXCHANGE) return tokenExchangeGrant(request, deps, params);
  return oauthError('unsupported_grant_type', 'grant_type must be authorization_code, refresh_token or token exchange');
};
