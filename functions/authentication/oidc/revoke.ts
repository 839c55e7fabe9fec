import { getApiSessionById } from '#shared/auth/api-session-store.ts';
import type { Operation } from '#shared/http/operation.ts';
import { isOidcClientId, type OidcTokenClaims, sessionFactsOf, verifyOidcToken } from '#shared/oidc/oidc-tokens.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { clientIdOf, NO_STORE, oauthError, oidcParams, param } from './oidc-request.ts';
import { endOidcSession, isLiveRefresh } from './oidc-sessions.ts';

/**
 * A token to revoke, verified as what it says it is: a refresh token still unspent (a spent one is dead already, and
 * whoever kept a copy must not end the session its owner moved on with), or an access token not expired. Tried in the
 * order `token_type_hint` suggests (RFC 7009 2.1), the other after; undefined when neither.
 */
async function revocableClaims(
  deps: Deps,
  token: string,
  hint: string | undefined,
): Promise<OidcTokenClaims | undefined> {
  const kinds = hint === 'access_token' ? (['a', 'r'] as const) : (['r', 'a'] as const);
  for (const kind of kinds) {
    const claims = await verifyOidcToken(deps, token, kind);
    if (!claims) continue;
    if (kind === 'a') return claims;
    const session = await getApiSessionById(deps, claims.z_asid);
    return session && isLiveRefresh(session, claims.jti) ? claims : undefined;
  }
  return undefined;
}

/**
 * `POST /oidc/revoke` (RFC 7009): a refresh or an access token of the client that asks ends its session, the legacy
 * way (`endOidcSession`: the row deleted, its Dial/Bind sessions ended, the routers told), so every token of the
 * session stops at once: the next request, refresh and exchange find no session. The reference revokes the token's
 * `jti` alone; an access token here ends its whole session (RFC 7009 2.1 allows it), which every check reads anyway,
 * so no `jti` denylist is kept or read. Anything not a live token of ours is answered 200 as well (RFC 7009 2.2).
 */
export const oidcRevoke: Operation = async (request, deps) => {
  const params = oidcParams(request);
  const clientId = clientIdOf(request, params);
  if (!isOidcClientId(clientId)) return oauthError('invalid_client', 'the client must be openziti or native', 401);
  const token = param(params, 'token');
  if (token === undefined) return oauthError('invalid_request', 'token is required');
  const claims = await revocableClaims(deps, token, param(params, 'token_type_hint'));
  if (claims) {
    if (claims.client_id !== clientId)
      return oauthError('invalid_client', 'the token was issued to another client', 401);
    const ended = await endOidcSession(deps, sessionFactsOf(claims));
    if (ended) request.logger.info('oidc session revoked', { apiSessionId: claims.z_asid, identityId: claims.sub });
  }
  return { statusCode: 200, body: '', headers: NO_STORE };
};
