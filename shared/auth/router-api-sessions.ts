import { apiSessionCertificateSchema, apiSessionCertificates } from '../entities/api-session-certificate.ts';
import { type Authenticator, authenticators } from '../entities/authenticator.ts';
import type { Identity } from '../entities/identity.ts';
import { identities } from '../entities/identity.ts';
import { mapBounded } from '../map-bounded.ts';
import type { Deps } from '../ports/deps.ts';
import {
  type IdentitySessionFilter,
  sessionItemPagesOfIdentity,
  sessionItemsOf,
  sessionKeyPages,
  tokenHashOf,
} from '../store/api-session-items.ts';
import { listChildren, validChildren } from '../store/children.ts';
import type { ApiSessionChangeSubject } from '../store/ctrl-changes.ts';
import { keys } from '../store/keys.ts';
import type { ApiSession } from './api-session.ts';
import { isLive, isRevoked, liveCutoff, mayReachRouters, owesSecondFactor, toSession } from './api-session-store.ts';
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
 * The sessions a router may hold, as it holds them: opened on the client API (`mayReachRouters`), live, not partial,
 * not ended (`isRevoked`), and with a token this key derives (a session from before tokens were derivable is left out:
 * its holder logs in again). Which router may hold which of them (its edge router policies) is the endpoint's to
 * decide (`ctrl-channel/router-session-reach.ts`). Their identities
 * and the authenticators they end with are one batch read.
 */
export async function routerApiSessionsOf(
  deps: Deps,
  tokenKey: Uint8Array,
  sessions: readonly ApiSession[],
): Promise<RouterApiSession[]> {
  const now = deps.now();
  const candidates = sessions.flatMap((session) => {
    if (!mayReachRouters(session) || !isLive(deps, session) || owesSecondFactor(session)) return [];
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
export function removedSessionsOf(
  tokenKey: Uint8Array,
  subjects: readonly ApiSessionChangeSubject[],
): RemovedRouterApiSession[] {
  return subjects.flatMap((subject) => {
    const token = derivedSessionToken(tokenKey, { ...subject, sessionId: subject.id });
    return token === undefined ? [] : [{ token, id: subject.id, identityId: subject.identityId }];
  });
}

/**
 * The sessions of one identity a router may hold, as it holds them, a page at a time (at most `pageSize` read per
 * page): what a router is sent when the identity comes to be allowed to use it, or when its certificate changed.
 */
export async function* routerApiSessionPagesOfIdentity(
  deps: Deps,
  tokenKey: Uint8Array,
  identityId: string,
  pageSize: number,
): AsyncGenerator<RouterApiSession[], void, undefined> {
  for await (const items of sessionItemPagesOfIdentity(deps.store, identityId, {}, pageSize)) {
    const kept = await routerApiSessionsOf(deps, tokenKey, items.map(toSession));
    if (kept.length > 0) yield kept;
  }
}

/** A session a router is told to drop: its token, and the ids it is known by. */
export interface RemovedRouterApiSession {
  readonly token: string;
  readonly id: string;
  readonly identityId: string;
}

/**
 * The tokens of one identity's sessions that `filter` takes (all of them, or those a change ended), a page at a time,
 * for the routers to drop: those routers may hold (`mayReachRouters`) and this key derives. Read from the identity's
 * index partition, which may lag a moment behind a session just written: callers that must miss none read again
 * after a grace.
 */
export async function* removedApiSessionPagesOfIdentity(
  deps: Deps,
  tokenKey: Uint8Array,
  identityId: string,
  filter: IdentitySessionFilter,
  pageSize: number,
): AsyncGenerator<RemovedRouterApiSession[], void, undefined> {
  for await (const items of sessionItemPagesOfIdentity(deps.store, identityId, filter, pageSize)) {
    const subjects = items.filter(mayReachRouters).map(subjectOfItem);
    const removed = removedSessionsOf(tokenKey, subjects);
    if (removed.length > 0) yield removed;
  }
}

function subjectOfItem(item: Record<string, unknown>): ApiSessionChangeSubject {
  return {
    id: String(item.id),
    identityId: String(item.identityId),
    ...(item.endsWithAuthenticator === true ? { authenticatorId: String(item.authenticatorId) } : {}),
    tokenHash: tokenHashOf(String(item.PK)),
  };
}
