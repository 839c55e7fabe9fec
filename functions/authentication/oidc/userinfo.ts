import type { HttpResult } from '#shared/http/http-result.ts';
import type { Operation } from '#shared/http/operation.ts';
import { sessionFactsOf, verifyOidcToken } from '#shared/oidc/oidc-tokens.ts';
import { NO_STORE, oidcParams, param } from './oidc-request.ts';
import { liveSessionOf } from './oidc-sessions.ts';

/**
 * A bearer refused (RFC 6750 3): 401 with its challenge, `error="invalid_token"` when a token came and did not do, no
 * error code when none came.
 */
function bearerRefused(description: string | undefined): HttpResult {
  const challenge =
    description === undefined ? 'Bearer' : `Bearer error="invalid_token", error_description="${description}"`;
  return {
    statusCode: 401,
    body: {
      error: description === undefined ? 'invalid_request' : 'invalid_token',
      error_description: description ?? 'an access token is required',
    },
    headers: { ...NO_STORE, 'www-authenticate': challenge },
  };
}

/**
 * `GET|POST /oidc/userinfo` (OpenID Connect Core 5.3): for an access token of ours (`Authorization: Bearer`, or the
 * form's `access_token`, RFC 6750 2.2) whose session lives, who it speaks for: `sub`, `name`, and the reference's
 * `z_ia` (admin) and `z_eid` (external id) — what its `setInfo` gives for the `openid` scope (the reference calls it
 * with no scopes and so answers `{}`; no SDK calls it). Read from the identity as it is now.
 */
export const oidcUserInfo: Operation = async (request, deps) => {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  const token = bearer ?? param(oidcParams(request), 'access_token');
  if (token === undefined) return bearerRefused(undefined);
  const claims = await verifyOidcToken(deps, token, 'a');
  if (!claims) return bearerRefused('the access token is not valid');
  const live = await liveSessionOf(deps, sessionFactsOf(claims));
  if (!live) return bearerRefused('the session of the access token has ended');
  const { identity } = live;
  return {
    statusCode: 200,
    body: {
      sub: identity.id,
      name: identity.name,
      z_ia: identity.isAdmin,
      ...(identity.externalId ? { z_eid: identity.externalId } : {}),
    },
    headers: NO_STORE,
  };
};
