import type { ApiSession } from '#shared/auth/api-session.ts';
import {
  deleteApiSession,
  getApiSessionById,
  type LiveSession,
  liveSessionOfToken,
  oidcSessionToken,
  owesSecondFactor,
  rotateOidcRefresh,
  type SessionTouch,
} from '#shared/auth/api-session-store.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { RefreshCommit } from './token-issue.ts';

/**
 * The API session behind an OIDC token (`docs/oidc-design.md`, E.4): the row its `z_asid` names, stored under a
 * token derived from that id and the identity (`oidcSessionToken`), judged and ended as any session is.
 */

/** What names a session in a token of ours: its `z_asid` and `sub`. */
export interface OidcSessionRef {
  readonly apiSessionId: string;
  readonly identityId: string;
}

/**
 * The session a grant or a bearer stands on, as a request's would be judged: live, not revoked (the identity enabled,
 * not locked, its sessions not ended since, the login's authenticator still there), every factor given; its activity
 * is refreshed as a request's is. Undefined when not.
 */
export async function liveSessionOf(
  deps: Deps,
  ref: OidcSessionRef,
  touch: SessionTouch = 'interval',
): Promise<LiveSession | undefined> {
  const token = await oidcSessionToken(deps, ref.apiSessionId, ref.identityId);
  // A rotation's own write is conditioned on the session as it is then (live, its refresh token unspent), so its read
  // may be eventually consistent first, as a GET's caller is (half the read units; a refusal is read again strongly).
  const eventual = touch === 'byCaller';
  const live = await liveSessionOfToken(deps, token, { partialPasses: false, touch, eventual });
  return live && !owesSecondFactor(live.session) ? live : undefined;
}

/** Whether a refresh token is its session's live one (the newest issued, not spent since). */
export function isLiveRefresh(session: Pick<ApiSession, 'refreshJti'>, jti: string): boolean {
  return session.refreshJti === jti;
}

/**
 * The commit of a refresh (`refresh_token`, or an exchange of a refresh token for a new one): the session's live
 * refresh token replaced by the new one and its activity refreshed, in one conditional write (`rotateOidcRefresh`),
 * which the session's read left to it (`touch: 'byCaller'`).
 */
export function refreshRotation(deps: Deps, session: ApiSession, spent: string): RefreshCommit {
  return async (next) =>
    (await rotateOidcRefresh(deps, session, spent, next)) ? undefined : 'the refresh token was already used';
}

/**
 * Ends the session a token names, the way a logout ends a legacy one (`deleteApiSession`): its row goes, so every
 * request, refresh and exchange of it fails from now on, its Dial/Bind sessions end and the routers are told. False
 * when there was none (ended already, or never an OIDC session of that identity).
 */
export async function endOidcSession(deps: Deps, ref: OidcSessionRef): Promise<boolean> {
  const session = await getApiSessionById(deps, ref.apiSessionId);
  if (session?.kind !== 'oidc' || session.identityId !== ref.identityId) return false;
  return deleteApiSession(deps, session);
}
