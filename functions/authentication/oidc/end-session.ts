import type { Operation } from '#shared/http/operation.ts';
import { isOidcClientId, oidcIssuerOf, sessionFactsOf, verifyOidcToken } from '#shared/oidc/oidc-tokens.ts';
import { oauthError, oidcParams, param, redirect } from './oidc-request.ts';
import { endOidcSession } from './oidc-sessions.ts';

/**
 * Where a client may be sent after its logout, as the reference allows them when the configuration names none
 * (`docs/oidc-design.md`, A): the custom scheme, and the loopback hosts on any port.
 */
const POST_LOGOUT_REDIRECT_URIS = [
  /^openziti:\/\/auth\/logout$/,
  /^https?:\/\/(127\.0\.0\.1|localhost)(:\d{1,5})?\/auth\/logout$/,
];

export function isAllowedPostLogoutRedirectUri(uri: string): boolean {
  return POST_LOGOUT_REDIRECT_URIS.some((pattern) => pattern.test(uri));
}

/**
 * `GET|POST /oidc/end_session` (OpenID RP-initiated logout, as zitadel's `op.EndSession` serves it for the reference):
 * the session `id_token_hint` names ends (`endOidcSession`; a hint past its `exp` still does, as there), and the client
 * is sent to `post_logout_redirect_uri` when a client is known (the hint's `azp`, or `client_id`, which must agree)
 * and the URI is one it may use, else to `/oidc/logged-out`; `state` goes along. A hint that does not verify is
 * refused (400) and ends nothing. The reference ends every token of the identity (a revocation by identity id); this
 * ends the hinted session only, the one that logs out: the identity's other devices stay logged in.
 */
export const oidcEndSession: Operation = async (request, deps) => {
  const params = oidcParams(request);
  const hint = param(params, 'id_token_hint');
  const claims = hint === undefined ? undefined : await verifyOidcToken(deps, hint, 'id', { acceptExpired: true });
  if (hint !== undefined && !claims) return oauthError('invalid_request', 'id_token_hint is not valid');
  const named = param(params, 'client_id');
  if (claims && named !== undefined && named !== claims.client_id) {
    return oauthError('invalid_request', "client_id is not the id_token_hint's");
  }
  const clientId = claims?.client_id ?? named;
  if (clientId !== undefined && !isOidcClientId(clientId)) {
    return oauthError('invalid_request', 'the client must be openziti or native');
  }
  let location = `${oidcIssuerOf(request.baseUrl)}/logged-out`;
  const asked = param(params, 'post_logout_redirect_uri');
  if (clientId !== undefined && asked !== undefined) {
    if (!isAllowedPostLogoutRedirectUri(asked)) {
      return oauthError('invalid_request', 'post_logout_redirect_uri is not one this client may use');
    }
    location = asked;
  }
  if (claims && (await endOidcSession(deps, sessionFactsOf(claims)))) {
    request.logger.info('oidc session ended', { apiSessionId: claims.z_asid, identityId: claims.sub });
  }
  const state = param(params, 'state');
  if (state === undefined) return redirect(location);
  const back = new URL(location);
  back.searchParams.set('state', state);
  return redirect(back.toString());
};
