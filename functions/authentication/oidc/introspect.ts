import type { Operation } from '#shared/http/operation.ts';
import {
  isOidcClientId,
  type OidcTokenClaims,
  type OidcTokenType,
  sessionFactsOf,
  verifyOidcToken,
} from '#shared/oidc/oidc-tokens.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { clientIdOf, NO_STORE, oauthError, oidcParams, param } from './oidc-request.ts';
import { isLiveRefresh, liveSessionOf } from './oidc-sessions.ts';

/**
 * A token of ours that is good now: an access token not expired, or a refresh token unspent, whose session lives. Tried
 * in the order `token_type_hint` suggests, the other after.
 */
async function liveToken(
  deps: Deps,
  token: string,
  hint: string | undefined,
): Promise<{ claims: OidcTokenClaims; kind: OidcTokenType } | undefined> {
  const kinds = hint === 'refresh_token' ? (['r', 'a'] as const) : (['a', 'r'] as const);
  for (const kind of kinds) {
    const claims = await verifyOidcToken(deps, token, kind);
    if (!claims) continue;
    const live = await liveSessionOf(deps, sessionFactsOf(claims));
    if (!live || (kind === 'r' && !isLiveRefresh(live.session, claims.jti))) return undefined;
    return { claims, kind };
  }
  return undefined;
}

/**
 * `POST /oidc/oauth/introspect` (RFC 7662), for a client of the provider (`client_id` or Basic, as the reference's
 * resource-client check takes the public clients): `{active: true, …}` with the token's claims for a token good now
 * (its session judged as a request's), `{active: false}` for anything else. The reference answers `{active: false}`
 * for every token (its storage does not implement introspection); no SDK calls it.
 */
export const oidcIntrospect: Operation = async (request, deps) => {
  const params = oidcParams(request);
  if (!isOidcClientId(clientIdOf(request, params))) {
    return oauthError('invalid_client', 'the client must be openziti or native', 401);
  }
  const token = param(params, 'token');
  if (token === undefined) return oauthError('invalid_request', 'token is required');
  const live = await liveToken(deps, token, param(params, 'token_type_hint'));
  if (!live) return { statusCode: 200, body: { active: false }, headers: NO_STORE };
  const { claims, kind } = live;
  return {
    statusCode: 200,
    body: {
      active: true,
      scope: (claims.scopes ?? []).join(' '),
      client_id: claims.client_id,
      token_type: kind === 'a' ? 'Bearer' : 'refresh_token',
      exp: claims.exp,
      iat: claims.iat,
      ...(claims.nbf === undefined ? {} : { nbf: claims.nbf }),
      sub: claims.sub,
      aud: claims.aud,
      iss: claims.iss,
      jti: claims.jti,
      z_asid: claims.z_asid,
    },
    headers: NO_STORE,
  };
};
