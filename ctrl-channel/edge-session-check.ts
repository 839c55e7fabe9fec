import type { KeyObject } from 'node:crypto';
import type { ApiSession } from '#shared/auth/api-session.ts';
import { keptSessionInUse, liveSessionOfToken } from '#shared/auth/api-session-store.ts';
import { credentialOfPresented } from '#shared/auth/oidc-credential.ts';
import type { Identity } from '#shared/entities/identity.ts';
import { type Service, services } from '#shared/entities/service.ts';
import { type Session, sessions } from '#shared/entities/session.ts';
import { edgeRoutersFor, selectable } from '#shared/policy/access.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { DialCache, SessionFactsOwners } from './dial-cache.ts';

/**
 * The error codes a router relays to its SDK when the controller refuses a terminator or a circuit (the SDK's
 * `edge_client` error enumeration, as the reference's edge control handlers send them).
 */
export const EdgeErrorCode = {
  internal: 1,
  invalidApiSession: 2,
  invalidSession: 3,
  wrongSessionType: 4,
  invalidEdgeRouterForSession: 5,
  invalidService: 6,
  tunnelingNotEnabled: 7,
  invalidTerminator: 8,
  invalidPrecedence: 9,
  invalidCost: 10,
  encryptionDataMissing: 11,
  invalidApiSessionType: 12,
  invalidInstanceId: 13,
  accessDenied: 14,
} as const;

/** What a router should do after a refusal: retry as usual, later (busy), from a new session, or never. */
export const RetryHint = { retryDefault: 0, tooBusy: 1, startOver: 2, notRetriable: 3 } as const;

/** A refusal of what a router asked for on an SDK's behalf: the code and hint the router acts on, and why. */
export class EdgeRefusal extends Error {
  readonly code: number;
  readonly retryHint: number;
  constructor(code: number, retryHint: number, message: string) {
    super(message);
    this.name = 'EdgeRefusal';
    this.code = code;
    this.retryHint = retryHint;
  }
}

/** What a router presents for an SDK: the SDK's session token (a JWT from `POST /sessions`) and API session token. */
export interface EdgeCredentials {
  readonly sessionToken: string;
  readonly apiSessionToken: string;
}

/**
 * A checked request: the SDK's session, its API session, identity and service, and that it may use this router; with
 * the ids a change log notice names them by (the endpoint's memory of checks drops them by these).
 */
export interface CheckedSession extends SessionFactsOwners {
  readonly session: Session;
  readonly apiSession: ApiSession;
  readonly identity: Identity;
  readonly service: Service;
}

/** jose, loaded on the first check: only the endpoint process needs it. */
const jose = () => import('jose');

/**
 * The reference's claims of a session token (`common.ServiceAccessClaims`) as this controller checks them: it signed
 * the token, so a verified signature proves them; the stored session is what counts (a session deleted since is
 * refused even though its token would still verify).
 */
interface SessionClaims {
  readonly jti: string;
  readonly sub: string;
  readonly z_t: string;
  readonly z_st: string;
  readonly z_asid: string;
  readonly z_iid: string;
}

async function verifiedClaims(token: string, key: KeyObject): Promise<SessionClaims> {
  const { jwtVerify } = await jose();
  try {
    const { payload } = await jwtVerify(token, key, { audience: 'openziti', algorithms: ['ES256'] });
    const claims = payload as Partial<SessionClaims>;
    for (const name of ['jti', 'sub', 'z_t', 'z_st', 'z_asid', 'z_iid'] as const) {
      if (typeof claims[name] !== 'string') throw new Error(`no ${name} claim`);
    }
    if (claims.z_t !== 's') throw new Error('not a session token');
    return claims as SessionClaims;
  } catch (error) {
    throw new EdgeRefusal(
      EdgeErrorCode.invalidSession,
      RetryHint.startOver,
      `invalid session token: ${(error as Error).message}`,
    );
  }
}

/**
 * Checks what a router asks on an SDK's behalf (a Bind's terminator, a Dial's circuit) as the reference's edge control
 * handlers do: the API session is live (its token, as the SDK presented it to the router), the session token is one
 * this controller signed for that API session and is still stored, it is of the expected type, the service exists,
 * and the SDK's identity may reach the service through this edge router (edge router policies and service edge router
 * policies, now: a policy changed since the session was made counts). With a `cache`, what it read (the sessions,
 * the identity, the service, the policies) is as the endpoint's memory has it, which the change log's notices keep
 * within a second or two of the tables (`dial-cache.ts`); the API session's idle timeout is checked on each use.
 * Refusals are {@link EdgeRefusal}s.
 */
export async function checkEdgeSession(
  deps: Deps,
  routerId: string,
  credentials: EdgeCredentials,
  expectedType: 'Dial' | 'Bind',
  cache?: DialCache,
): Promise<CheckedSession> {
  const read = () => readCheckedSession(deps, credentials);
  const facts = cache
    ? await cache.sessionFacts([credentials.apiSessionToken, credentials.sessionToken], read, stillLive(deps))
    : await read();
  const { session, service } = facts;
  if (session.type !== expectedType) {
    throw new EdgeRefusal(
      EdgeErrorCode.wrongSessionType,
      RetryHint.startOver,
      `a ${session.type} session cannot ${expectedType === 'Dial' ? 'dial' : 'bind'}`,
    );
  }
  const identity = selectable(facts.identity);
  const ofService = selectable(service);
  const lookUp = () => edgeRoutersFor(deps.store, identity, ofService);
  const mayUse = cache
    ? await cache.mayUse(identity, ofService, routerId, lookUp)
    : (await lookUp()).includes(routerId);
  if (!mayUse) {
    throw new EdgeRefusal(
      EdgeErrorCode.invalidEdgeRouterForSession,
      RetryHint.startOver,
      'the identity may not use this edge router for this service',
    );
  }
  return facts;
}

/** A check's facts read again: their API session still live (the idle timeout, its activity refreshed when due). */
const stillLive =
  (deps: Deps) =>
  async (kept: CheckedSession): Promise<CheckedSession | undefined> => {
    const apiSession = await keptSessionInUse(deps, kept.apiSession);
    if (!apiSession) return undefined;
    return apiSession === kept.apiSession ? kept : { ...kept, apiSession };
  };

/**
 * What the credentials stand for, read from the table: the live API session of the token and its identity, the
 * session the token names (one this controller signed for that API session, still stored) and its service; what
 * the check keeps in memory. Refuses credentials that are not all that.
 */
async function readCheckedSession(deps: Deps, credentials: EdgeCredentials): Promise<CheckedSession> {
  // An OIDC SDK's access token stands for its session's stored token; a legacy token for itself. A check kept in
  // memory lives at most `DIAL_CACHE_MAX_AGE_MS` (30 s), within the minute of clock skew the token's own verification
  // allows past its `exp`: the next read verifies it again and refuses it once expired.
  const credential = credentials.apiSessionToken
    ? await credentialOfPresented(deps, credentials.apiSessionToken)
    : undefined;
  const live = credential ? await liveSessionOfToken(deps, credential.sessionToken, { eventual: true }) : undefined;
  if (!live || (live.session.isMfaRequired && !live.session.isMfaComplete)) {
    throw new EdgeRefusal(EdgeErrorCode.invalidApiSession, RetryHint.startOver, 'invalid api session');
  }
  const claims = await verifiedClaims(credentials.sessionToken, await deps.signers.server.publicKey());
  if (claims.z_asid !== live.session.id) {
    throw new EdgeRefusal(EdgeErrorCode.invalidSession, RetryHint.startOver, 'the session is of another api session');
  }
  // The session strongly (an SDK binds or dials right after it made the session); the service as a client's reads
  // read what admins write (`clientGrants`).
  const [stored, service] = await Promise.all([
    deps.store.get(sessions, claims.jti),
    deps.store.get(services, claims.sub, 'clientGrants'),
  ]);
  const session = stored?.doc;
  if (!session || session.apiSessionId !== live.session.id || session.serviceId !== claims.sub) {
    throw new EdgeRefusal(EdgeErrorCode.invalidSession, RetryHint.startOver, 'invalid session');
  }
  if (!service) throw new EdgeRefusal(EdgeErrorCode.invalidService, RetryHint.notRetriable, 'invalid service');
  return {
    session,
    apiSession: live.session,
    identity: live.identity,
    service: service.doc,
    apiSessionId: live.session.id,
    identityId: live.identity.id,
    sessionId: session.id,
  };
}
