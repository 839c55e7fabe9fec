import type { Identity } from '../entities/identity.ts';
import { ApiError } from '../errors/api-error.ts';
import { bearerTokenOf } from '../ext-jwt/bearer-token.ts';
import type { Deps } from '../ports/deps.ts';
import type { Route } from '../routes/route.ts';
import type { ApiSession } from './api-session.ts';
import { type CallerKeys, extJwtPassedOps, liveSessionOfToken, type SessionTouch } from './api-session-store.ts';
import type { SessionCredential } from './oidc-credential.ts';

/**
 * The authenticated caller of a request: its API session, the token it presented (a `zt-session` token, or an OIDC
 * access token), and its identity.
 */
export interface Caller {
  readonly token: string;
  readonly session: ApiSession;
  readonly identity: Identity;
  /** What the operation asked to read with its caller (`CallerReads.alongside`), by item key; undefined where none. */
  readonly alongside: ReadonlyMap<string, Record<string, unknown> | undefined>;
}

/** What an operation asks of the read of its caller (an `Operation`'s `callerReads`). */
export interface CallerReads {
  /** Items the operation reads of the caller's own, read in the batch that reads the session and identity. */
  readonly alongside?: CallerKeys;
  /** How often the request refreshes the session's activity (`SessionTouch`; `interval` unless said). */
  readonly touch?: SessionTouch;
  /**
   * The operation changes nothing and may read its caller eventually consistent first (`READS.callerOfRead`): said by
   * the operation, since a GET may write (recovery codes spend a TOTP code). Taken only for GETs that need no admin.
   */
  readonly eventual?: true;
}

// The reference's WWW-Authenticate challenges, so clients that parse them keep working.
const MISSING_CHALLENGE =
  'zt-session realm="zt-session" error="missing" error_description="no matching token was provided",' +
  'Bearer realm="openziti-oidc" error="missing" error_description="no matching token was provided"';
const INVALID_CHALLENGE = 'zt-session realm="zt-session" error="invalid" error_description="token is invalid"';
const INVALID_BEARER_CHALLENGE =
  'Bearer realm="openziti-oidc" error="invalid_token" error_description="token is invalid"';

// Which header carries the session: a client that sent none (or sent it as a bearer token) learns where it goes.
const MISSING_CAUSE = {
  message:
    'no API session token was sent: send the token that POST /authenticate returns in the zt-session header, or an ' +
    "access token of this controller's OIDC provider (/oidc) as Authorization: Bearer",
};

function unauthorized(challenge: string | undefined, message?: string, cause?: { message: string }): ApiError {
  return new ApiError('UNAUTHORIZED', {
    ...(message ? { message } : {}),
    ...(cause ? { cause } : {}),
    ...(challenge ? { headers: { 'www-authenticate': challenge } } : {}),
  });
}

/**
 * A partial session whose only missing factor is the external JWT is completed by the first request that brings a
 * valid one (any route, its own views included): the session records it, so the token is verified once, not on every
 * request. Anything else leaves the session as it is.
 */
async function completedByExtJwt(
  deps: Deps,
  headers: Readonly<Record<string, string | undefined>>,
  session: ApiSession,
  identity: Identity,
): Promise<ApiSession> {
  const waitsOnlyForExtJwt =
    session.isMfaRequired && !session.isMfaComplete && session.totpPending === false && session.extJwtPending === true;
  // The bearer is looked for first: most partial requests bring none, and they should not cost a policy read.
  if (!waitsOnlyForExtJwt || !bearerTokenOf(headers)) return session;
  // Loaded by the first request that brings one: its verification (jose, the JWKS cache) is no part of a cold start.
  const { extJwtCompletesRequest } = await import('../ext-jwt/secondary-ext-jwt.ts');
  if (!(await extJwtCompletesRequest(deps, headers, identity, deps.logger))) return session;
  await deps.store.transact(extJwtPassedOps(deps, session));
  deps.logger.info('api session completed by its secondary ext-jwt', { apiSessionId: session.id });
  return { ...session, extJwtPending: false, isMfaComplete: true };
}

/**
 * Whether a route's caller may be read eventually consistent first (`READS.callerOfRead`): an operation that says it
 * changes nothing (`CallerReads.eventual`), on a GET that needs no admin. Everything else reads its caller strongly:
 * a logout, a disable, a lockout or a demotion stops the very next request.
 */
function readsCallerEventually(route: Pick<Route, 'method' | 'auth'>, reads: CallerReads): boolean {
  return reads.eventual === true && route.method === 'GET' && route.auth !== 'admin';
}

/**
 * Resolves the `zt-session` header into the caller and checks it against the route's auth level; every failure is a
 * 401 `UNAUTHORIZED` (the reference never answers 403 for lack of access). A used session's activity is refreshed
 * (at most once a minute: `TOUCH_INTERVAL_MS`; a poll only near its expiry, `NEAR_EXPIRY_TOUCH_MS`).
 */
export async function resolveCaller(
  deps: Deps,
  headers: Readonly<Record<string, string | undefined>>,
  route: Pick<Route, 'method' | 'auth'>,
  reads: CallerReads = {},
  clientCertPem?: string,
): Promise<Caller | undefined> {
  const level = route.auth;
  if (level === 'none') return undefined;
  const presented = await presentedCredential(deps, headers, clientCertPem);
  const live = await liveSessionOfToken(deps, presented.sessionToken, {
    eventual: readsCallerEventually(route, reads),
    partialPasses: level === 'partial',
    ...reads,
  });
  if (!live) throw unauthorized(presented.access ? INVALID_BEARER_CHALLENGE : INVALID_CHALLENGE);
  const token = presented.token;
  const { identity } = live;
  const session = await completedByExtJwt(deps, headers, live.session, identity);
  const caller = { token, session, identity, alongside: live.alongside };
  if (level === 'partial') return caller;
  if (session.isMfaRequired && !session.isMfaComplete) {
    throw unauthorized(undefined, 'The API session must complete its second factor (MFA) first.');
  }
  if (level === 'admin' && !actsAsAdmin(caller)) {
    throw unauthorized(undefined, ADMIN_REQUIRED, identity.isAdmin ? CLIENT_SESSION_CAUSE : undefined);
  }
  return caller;
}

/** A credential as a request presented it, and the session token it stands for. */
interface Presented extends SessionCredential {
  /** The text the caller sent: its `zt-session` token or its access token. */
  readonly token: string;
}

/**
 * The request's API session credential: `zt-session` (a legacy token), else an access token of the OIDC provider as
 * `Authorization: Bearer` (`oidc-credential.ts`, loaded only by requests that bring a bearer and no `zt-session`: a
 * legacy request's cold start never reads it). A bearer token that is not ours is no session (an external JWT
 * completes a partial session, `completedByExtJwt`, beside a `zt-session`). Every failure is a 401.
 */
async function presentedCredential(
  deps: Deps,
  headers: Readonly<Record<string, string | undefined>>,
  clientCertPem: string | undefined,
): Promise<Presented> {
  const token = headers['zt-session']?.trim();
  if (token) return { token, sessionToken: token };
  const bearer = bearerTokenOf(headers);
  if (!bearer) throw unauthorized(MISSING_CHALLENGE, undefined, MISSING_CAUSE);
  const { bearerCredential } = await import('./oidc-credential.ts');
  const checked = await bearerCredential(deps, bearer, clientCertPem);
  if (checked.kind === 'not-ours') throw unauthorized(MISSING_CHALLENGE, undefined, MISSING_CAUSE);
  if (checked.kind === 'refused') throw unauthorized(INVALID_BEARER_CHALLENGE, undefined, checked.cause);
  return { token: bearer, ...checked.credential };
}

const ADMIN_REQUIRED = 'This operation requires an administrator.';

// An admin whose session was opened on the client API learns why, and where to log in instead.
const CLIENT_SESSION_CAUSE = {
  message: 'a client API session never acts as an admin: log in with POST /edge/management/v1/authenticate',
};

/**
 * Whether the caller acts as an admin: an admin identity whose session was opened on the management API. A session
 * opened on the client API (and one stored before the API was recorded) is an SDK's: routers are sent its token, to
 * check the SDKs that present it, so a stolen router must not hold a token with admin power (docs/security.md,
 * "What a router holds"). The identity's own operations do not need it.
 */
export function actsAsAdmin(caller: Pick<Caller, 'identity' | 'session'>): boolean {
  return caller.identity.isAdmin && caller.session.openedOn === 'management';
}
