import type { HttpResult } from '#shared/http/http-result.ts';
import type { OperationRequest } from '#shared/http/operation.ts';
import {
  isOidcClientId,
  type OidcSessionFacts,
  type OidcTokenKind,
  sessionFactsOf,
  signAccessToken,
  signIdToken,
  verifyOidcToken,
} from '#shared/oidc/oidc-tokens.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { clientIdOf, NO_STORE, type OidcParams, oauthError, param } from './oidc-request.ts';
import { isLiveRefresh, liveSessionOf, refreshRotation } from './oidc-sessions.ts';
import { issueTokens, secondsUntil } from './token-issue.ts';

/**
 * Token exchange (RFC 8693), how the Go SDK refreshes (`sdk-golang edge-apis/clients_shared.go: exchangeTokens`,
 * through zitadel's `client/tokenexchange`): client `native` in a Basic header with an empty secret, the refresh
 * token as subject (the access token when it holds none), and two requests each time, with the same subject: one
 * asking for a refresh token (or an access token, for an access token subject), read as `access_token`, `token_type`,
 * `refresh_token` and `expires_in`; then one asking for an ID token, read from `access_token` (RFC 8693's way of
 * issuing a token that is not an access token). So the ID token's request must still find the refresh token good
 * after the first request replaced it: it spends nothing and asks only that the token verify and its session live.
 */

export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** RFC 8693 3's token type identifiers the provider takes and issues, by what they verify as. */
const TOKEN_TYPES: Readonly<Record<string, OidcTokenKind>> = {
  'urn:ietf:params:oauth:token-type:access_token': 'a',
  'urn:ietf:params:oauth:token-type:refresh_token': 'r',
  'urn:ietf:params:oauth:token-type:id_token': 'id',
};

const ISSUED_TYPES: Readonly<Record<OidcTokenKind, string>> = {
  a: 'urn:ietf:params:oauth:token-type:access_token',
  r: 'urn:ietf:params:oauth:token-type:refresh_token',
  id: 'urn:ietf:params:oauth:token-type:id_token',
};

/** Audiences and scopes an exchange may name: the provider's own (`openziti`, `native`; `openid`, `offline_access`). */
const AUDIENCES = new Set(['openziti', 'native']);
const SCOPES = new Set(['openid', 'offline_access']);

/**
 * A subject token that does not do: `invalid_request`, as RFC 8693 2.2.2 has it for a subject token invalid "for any
 * reason" and the reference answers ("subject_token is invalid"), where the refresh grant says `invalid_grant`.
 */
const refusedSubject = (description: string) => oauthError('invalid_request', description);

/** The parts of an exchange that need no token read: what it asks for, from whom, on which subject. */
type ExchangeAsk =
  | {
      readonly subjectToken: string;
      readonly subject: 'a' | 'r';
      readonly requested: OidcTokenKind;
      readonly clientId: string;
    }
  | { readonly refused: HttpResult };

function exchangeAskOf(request: OperationRequest, params: OidcParams): ExchangeAsk {
  const subjectToken = param(params, 'subject_token');
  const subjectType = param(params, 'subject_token_type');
  if (subjectToken === undefined || subjectType === undefined) {
    return { refused: oauthError('invalid_request', 'subject_token and subject_token_type are required') };
  }
  const subject = TOKEN_TYPES[subjectType];
  if (subject !== 'a' && subject !== 'r') {
    return { refused: oauthError('invalid_request', 'subject_token_type must be an access token or a refresh token') };
  }
  // The reference's default: a refresh token, with an access token beside it.
  const requested = TOKEN_TYPES[param(params, 'requested_token_type') ?? ISSUED_TYPES.r];
  if (requested === undefined)
    return { refused: oauthError('invalid_request', 'requested_token_type is not supported') };
  if (subject === 'a' && requested === 'r') {
    return { refused: oauthError('invalid_request', 'an access token is exchanged for an access or an ID token only') };
  }
  if (param(params, 'actor_token') !== undefined) {
    return { refused: oauthError('invalid_request', 'delegation (actor_token) is not served') };
  }
  if ((params.get('audience') ?? []).some((audience) => audience !== '' && !AUDIENCES.has(audience))) {
    return { refused: oauthError('invalid_target', 'audience must be openziti or native') };
  }
  const scopes = (params.get('scope') ?? []).flatMap((scope) => scope.split(' ')).filter((scope) => scope !== '');
  if (scopes.some((scope) => !SCOPES.has(scope))) {
    return { refused: oauthError('invalid_scope', 'scope may name openid and offline_access only') };
  }
  const clientId = clientIdOf(request, params);
  if (!isOidcClientId(clientId)) {
    return { refused: oauthError('invalid_client', 'the client must be openziti or native', 401) };
  }
  return { subjectToken, subject, requested, clientId };
}

/** An exchange's answer (RFC 8693 2.2.1): the issued token always in `access_token`, its type in `issued_token_type`. */
function exchanged(
  deps: Deps,
  requested: OidcTokenKind,
  facts: OidcSessionFacts,
  issued: { readonly token: string; readonly exp: number },
  refreshToken?: string,
): HttpResult {
  return {
    statusCode: 200,
    body: {
      access_token: issued.token,
      issued_token_type: ISSUED_TYPES[requested],
      // RFC 8693 2.2.1: "N_A" for a token that is not an access token.
      token_type: requested === 'id' ? 'N_A' : 'Bearer',
      expires_in: secondsUntil(deps, issued.exp),
      scope: facts.scopes.join(' '),
      ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
    },
    headers: NO_STORE,
  };
}

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`, for a token of the same client whose session lives
 * (judged as a request's; its activity touched):
 * - a refresh token for a refresh token: a new access token and refresh token, the subject spent (once, as a refresh);
 * - a refresh token for an access token: an access token, the subject kept (it must be unspent);
 * - an access token for an access token: a new one, nothing spent;
 * - either for an ID token: an ID token, nothing spent, and a refresh token spent a moment ago still does (see above:
 *   the Go SDK asks for it with the refresh token its first request has just replaced; an ID token grants nothing).
 * An access token is never exchanged for a refresh token: a leaked one would then outlive its 30 minutes.
 */
export async function tokenExchangeGrant(
  request: OperationRequest,
  deps: Deps,
  params: OidcParams,
): Promise<HttpResult> {
  const ask = exchangeAskOf(request, params);
  if ('refused' in ask) return ask.refused;
  const claims = await verifyOidcToken(deps, ask.subjectToken, ask.subject);
  if (!claims) return refusedSubject('the subject token is not valid');
  if (claims.client_id !== ask.clientId) return refusedSubject("the subject token is another client's");
  const facts = sessionFactsOf(claims);
  // An exchange that rotates the refresh token refreshes the session's activity in that write; the others on the read.
  const rotates = ask.subject === 'r' && ask.requested === 'r';
  const live = await liveSessionOf(deps, facts, rotates ? 'byCaller' : 'interval');
  if (!live) return refusedSubject('the session of the subject token has ended');

  if (ask.requested === 'id') {
    return exchanged(deps, 'id', facts, await signIdToken(deps, claims.iss, facts, undefined));
  }
  if (ask.requested === 'a') {
    if (ask.subject === 'r' && !isLiveRefresh(live.session, claims.jti)) {
      return refusedSubject('the refresh token was already used');
    }
    return exchanged(deps, 'a', facts, await signAccessToken(deps, claims.iss, facts));
  }
  const tokens = await issueTokens(deps, claims.iss, facts, refreshRotation(deps, live.session, claims.jti), false);
  if ('refused' in tokens) return refusedSubject(tokens.refused);
  // The Go SDK's refresh: logged as the C SDK's `refresh_token` is (`routine`).
  return { ...exchanged(deps, 'r', facts, tokens.access, tokens.refresh.token), routine: true };
}
