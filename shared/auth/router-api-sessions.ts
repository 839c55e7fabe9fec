import { apiSessionCertificateSchema, apiSessionCertificates } from '../entities/api-session-certificate.ts';
import { type Authenticator, authenticators } from '../entities/authenticator.ts';
import type { Identity } from '../entities/identity.ts';
import { identities } from '../entities/identity.ts';
import { mapBounded } from '../map-bounded.ts';
import type { Deps } from '../ports/deps.ts';
import type { ApiSessionChangeSubject } from '../store/api-session-changes.ts';
import { sessionItemsOf, sessionKeyPages } from '../store/api-session-items.ts';
import { listChildren, validChildren } from '../store/children.ts';
import { keys } from '../store/keys.ts';
import type { ApiSession } from './api-session.ts';
import { isLive, isRevoked, liveCutoff, owesSecondFactor, toSession } from './api-session-store.ts';
import { derivedSessionToken } from './session-token.ts';

/**
 * API sessions as a v2 router holds them (`edge.ApiSession`): the token an SDK presents (derived again from the
 * session, `session-token.ts`), the SHA-1 fingerprints of the certificates an SDK may connect with (its identity's
 * certificate authenticator and the session's ephemeral certificates still valid), its id and its identity's.
 */
export interface RouterApiSession {
  readonly token: string;
  readonly certFingerprints: string[];
  readonly id: string;
  readonly identityId: string;
}

/** Concurrent reads of sessions' ephemeral certificates (only sessions that ever had one or a Dial/Bind session). */
const CERTIFICATE_READS = 8;

/**
 * The sessions a router may hold, as it holds them: live, not partial, not ended (`isRevoked`), and with a token this
 * key derives (a session from before tokens were derivable is left out: its holder logs in again). Their identities
 * and the authenticators they end with are one batch read.
 */
export async function routerApiSessionsOf(
  deps: Deps,
  tokenKey: Uint8Array,
  sessions: readonly ApiSession[],
): Promise<RouterApiSession[]> {
  const now = deps.now();
  const candidates = sessions.flatMap((session) => {
    if (!isLive(deps, session) || owesSecondFactor(session)) return [];
    const token = derivedSessionToken(tokenKey, tokenPartsOf(session));
    return token === undefined ? [] : [{ session, token }];
  });
  if (candidates.length === 0) return [];
  const identityIds = [...new Set(candidates.map(({ session }) => session.identityId))];
  const identityRead = await deps.store.readTogether(identityIds.map((id) => ({ def: identities, id })));
  const identityById = new Map(identityIds.map((id, index) => [id, identityRead.entities[index]?.doc as Identity]));
  // The authenticators read: those the sessions end with and those whose fingerprints the routers check.
  const authenticatorIds = [
    ...new Set([
      ...candidates.flatMap(({ session }) => (session.endsWithAuthenticator === true ? [session.authenticatorId] : [])),
      ...[...identityById.values()].flatMap((identity) => identity?.certAuthenticatorId ?? []),
    ]),
  ];
  const authenticatorRead = await deps.store.readTogether(authenticatorIds.map((id) => ({ def: authenticators, id })));
  const authenticatorById = new Map(
    authenticatorIds.map((id, index) => [id, authenticatorRead.entities[index]?.doc as Authenticator | undefined]),
  );
  const kept = candidates.filter(({ session }) => {
    const identity = identityById.get(session.identityId);
    return identity !== undefined && !isRevoked(session, identity, authenticatorById.get(session.authenticatorId), now);
  });
  return mapBounded(kept, CERTIFICATE_READS, async ({ session, token }) => {
    const identity = identityById.get(session.identityId);
    const certificate = identity?.certAuthenticatorId ? authenticatorById.get(identity.certAuthenticatorId) : undefined;
    return {
      token,
      certFingerprints: [
        ...(certificate?.fingerprint ? [certificate.fingerprint] : []),
        ...(await ephemeralFingerprints(deps, session, now)),
      ],
      id: session.id,
      identityId: session.identityId,
    };
  });
}

/** The fingerprints of the session's ephemeral certificates still valid (read only when it may have any). */
async function ephemeralFingerprints(deps: Deps, session: ApiSession, now: Date): Promise<string[]> {
  if (session.hasSessions !== true) return [];
  const children = await listChildren(deps, 'api-sessions', session.id, apiSessionCertificates.collection);
  return validChildren(deps, children, apiSessionCertificateSchema)
    .filter((certificate) => Date.parse(certificate.validTo) > now.getTime())
    .map((certificate) => certificate.fingerprint);
}

function tokenPartsOf(session: ApiSession) {
  return {
    sessionId: session.id,
    identityId: session.identityId,
    ...(session.endsWithAuthenticator === true ? { authenticatorId: session.authenticatorId } : {}),
    tokenHash: session.tokenHash,
  };
}

/**
 * Every session a router may hold, a page at a time (at most `pageSize` read per page; fewer kept), in id order: what
 * a router's full sync sends, without holding every session at once.
 */
export async function* routerApiSessionPages(
  deps: Deps,
  tokenKey: Uint8Array,
  pageSize: number,
): AsyncGenerator<RouterApiSession[], void, undefined> {
  const cutoff = liveCutoff(deps);
  for await (const sessionPks of sessionKeyPages(deps.store, cutoff, pageSize)) {
    const items = await sessionItemsOf(deps.store, sessionPks);
    const kept = await routerApiSessionsOf(deps, tokenKey, items.map(toSession));
    if (kept.length > 0) yield kept;
  }
}

/** The sessions changes name, read again as they are now (gone, partial or ended ones left out). */
export async function routerApiSessionsOfChanged(
  deps: Deps,
  tokenKey: Uint8Array,
  subjects: readonly ApiSessionChangeSubject[],
): Promise<RouterApiSession[]> {
  const items = await sessionItemsOf(
    deps.store,
    subjects.map((subject) => keys.apiSession(subject.tokenHash).PK),
  );
  return routerApiSessionsOf(deps, tokenKey, items.map(toSession));
}

/** The tokens of removed sessions a router may hold: those this key derives (no other was ever sent). */
export function removedTokensOf(
  tokenKey: Uint8Array,
  subjects: readonly ApiSessionChangeSubject[],
): { tokens: string[]; ids: string[] } {
  const removed = subjects.flatMap((subject) => {
    const token = derivedSessionToken(tokenKey, { ...subject, sessionId: subject.id });
    return token === undefined ? [] : [{ token, id: subject.id }];
  });
  return { tokens: removed.map(({ token }) => token), ids: removed.map(({ id }) => id) };
}
