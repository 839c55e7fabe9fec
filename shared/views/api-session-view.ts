import type { ApiSession } from '../auth/api-session.ts';
import { sessionExpiry } from '../auth/api-session-store.ts';
import type { Deps } from '../ports/deps.ts';
import { entityRef, selfLinks } from './entity-ref.ts';

/**
 * An API session as the API shows it. The token is only known to the caller presenting it, so it appears only in
 * the caller's own views; admin views show an empty string in its place.
 */
export function apiSessionView(session: ApiSession, identityName: string, token = '') {
  const {
    tokenHash: _tokenHash,
    totpPending: _totp,
    extJwtPending: _extJwt,
    endsWithAuthenticator: _endsWithAuthenticator,
    openedOn: _openedOn,
    kind: _kind,
    refreshJti: _refreshJti,
    ...rest
  } = session;
  return {
    ...rest,
    _links: selfLinks('api-sessions', session.id),
    token,
    identity: entityRef('identities', session.identityId, identityName),
    authQueries: [],
    cachedLastActivityAt: session.lastActivityAt,
    cachedUpdatedAt: session.updatedAt,
    isCertExtendable: session.isCertExtendable ?? false,
  };
}

/** The caller's own session: the admin view plus its token and when it expires. */
export function currentApiSessionView(deps: Deps, session: ApiSession, identityName: string, token: string) {
  return { ...apiSessionView(session, identityName, token), ...sessionExpiry(deps, session) };
}
