import { type Authenticator, authenticators } from '../entities/authenticator.ts';
import { type Identity, identities, isDisabledAt, namesLiveAuthenticator } from '../entities/identity.ts';
import { ApiError } from '../errors/api-error.ts';
import { newId } from '../ids.ts';
import type { Deps } from '../ports/deps.ts';
import { removePostureData } from '../posture/posture-data.ts';
import { endSessionsOfApiSessions } from '../posture/session-lifetime.ts';
import {
  addToSessionNumber,
  identityHasActiveSession,
  idleSessionKeys,
  putSessionOps,
  removeSessionOps,
  rotateRefreshOnSessionItem,
  sessionIdsStored,
  sessionItemById,
  sessionItemOf,
  sessionItemsOf,
  sessionKeyPagesOfIdentity,
  setSessionFieldsOp,
  tokenHashOf,
  touchSessionItem,
} from '../store/api-session-items.ts';
import { type ApiSessionChangeSubject, apiSessionChangeOp, type EndedSessions } from '../store/ctrl-changes.ts';
import { itemKeyOf } from '../store/derived-items.ts';
import { MAX_TRANSACTION_ITEMS } from '../store/entity-store.ts';
import { documentOf, fitsKey, keys } from '../store/keys.ts';
import type { ItemKey, WriteOp } from '../store/write-op.ts';
import { type ApiSession, apiSessionSchema, type SessionApi } from './api-session.ts';
import { apiSessionTokenKey } from './api-session-token-key.ts';
import { namedAuthenticatorSeen, rememberIdentity, roleAttributesSeen } from './identities-seen.ts';
import { hashToken, idsOfToken, sessionToken } from './session-token.ts';

/**
 * What API sessions mean: when they expire and are revoked, what creating, using and ending one writes. Their items
 * (keyed by the token's hash; `shared/store/api-session-items.ts`) move the type's counter with every session added
 * or removed, each removal conditioned on the session still being there, so a list's total never reads the sessions.
 */

/**
 * How long after its expiry DynamoDB's TTL deletes a session nobody removed. TTL deletes bypass the session counter,
 * so TTL is only a late backstop: use, the list, and the identity's disable and delete remove sessions (with the
 * counter) well before. The integrity scan (to come) recounts the counters for whatever TTL took.
 */
const TTL_BACKSTOP_MS = 7 * 24 * 60 * 60_000;

/** A session as far as ending it needs: its item's key (the token hash) and its id pointer. */
export interface SessionRef {
  readonly tokenHash: string;
  readonly id: string;
  /** False when the session is known never to have had a session (Dial/Bind), so ending it need not look for any. */
  readonly hasSessions?: boolean;
  /** False when the session is known never to have had posture data. */
  readonly hasPosture?: boolean;
  /** The ids its token carries: the routers are told of its end by them (`ctrl-changes.ts`). */
  readonly identityId: string;
  readonly authenticatorId?: string;
  readonly endsWithAuthenticator?: boolean;
  /** The API it was opened on: the management API's sessions never reach routers, so their end is not told. */
  readonly openedOn?: SessionApi;
  /** How it was opened: an OIDC session never reaches routers either. */
  readonly kind?: ApiSession['kind'];
}

/** A session as a change for the routers names it: its token's parts and hash. */
function changeSubjectOf(
  session: Pick<ApiSession, 'id' | 'identityId' | 'tokenHash'> &
    Partial<Pick<ApiSession, 'authenticatorId' | 'endsWithAuthenticator'>>,
): ApiSessionChangeSubject {
  return {
    id: session.id,
    identityId: session.identityId,
    ...(session.endsWithAuthenticator === true && session.authenticatorId !== undefined
      ? { authenticatorId: session.authenticatorId }
      : {}),
    tokenHash: session.tokenHash,
  };
}

/** The write, for the session's own transaction, that tells the routers it was added or updated (if they may hold it). */
function sessionChangeOps(deps: Deps, kind: 'added' | 'updated', session: ApiSession): WriteOp[] {
  return mayReachRouters(session) ? [apiSessionChangeOp(deps.store, kind, [changeSubjectOf(session)], deps.now())] : [];
}

/**
 * Whether the session still waits for a second factor (partial): requests that need a full session are refused, an
 * eventual read of one is read again (the factor may have just been given), and routers are told of it only once it
 * has them all.
 */
export function owesSecondFactor(session: Pick<ApiSession, 'isMfaRequired' | 'isMfaComplete'>): boolean {
  return session.isMfaRequired && !session.isMfaComplete;
}

/**
 * Whether routers may ever hold the session: any not opened on the management API (a session from before the API was
 * recorded included) and not an OIDC one. The management API's sessions are the admin tools' (the `ziti` CLI, the
 * console, Terraform), which never connect to a router, and only they act as admins (`actsAsAdmin`): no router is sent
 * their tokens. An OIDC session's SDK gives each router its access token, a JWT the router verifies with the data
 * model's key and checks against the model's policies (`ctrl-channel/router-data-state.ts`): nothing of it is pushed.
 */
export function mayReachRouters(session: { readonly openedOn?: unknown; readonly kind?: unknown }): boolean {
  return session.openedOn !== 'management' && session.kind !== 'oidc';
}

export interface NewApiSession {
  /**
   * When the session begins (its `createdAt`), when not now: a login gives the instant before it read the identity,
   * so whatever ended the identity's sessions after that read ends this one too (`isRevoked`).
   */
  readonly beganAt?: Date;
  readonly identityId: string;
  readonly authenticatorId: string;
  /** Whether `authenticatorId` names a stored authenticator, which the session then lives no longer than. */
  readonly endsWithAuthenticator: boolean;
  readonly ipAddress: string;
  /** The API the login came on: only the management API's sessions act as admins, only the client API's reach routers. */
  readonly openedOn: SessionApi;
  /**
   * `oidc` for a session the OIDC provider opens: never sent to routers, its token never given out
   * ({@link oidcSessionToken}); absent for `POST /authenticate`'s.
   */
  readonly kind?: ApiSession['kind'];
  readonly configTypes: readonly string[];
  /** The second factors still to give; the session is partial until both are given. */
  readonly totpPending: boolean;
  readonly extJwtPending: boolean;
  /** What a certificate login learned of its certificate (network-issued, extension asked for by an admin). */
  readonly isCertExtendable?: boolean;
  readonly isCertExtendRequested?: boolean;
  readonly isCertKeyRollRequested?: boolean;
}

const timeoutMs = (deps: Deps) => deps.config.apiSessionTimeoutMinutes * 60_000;

function ttlEpoch(deps: Deps, lastActivityAt: Date): number {
  return Math.ceil((lastActivityAt.getTime() + timeoutMs(deps) + TTL_BACKSTOP_MS) / 1000);
}

/** The last activity at or before which a session has expired, as stored (ISO-8601 UTC orders as text as in time). */
export function liveCutoff(deps: Deps): string {
  return new Date(deps.now().getTime() - timeoutMs(deps)).toISOString();
}

/** Whether the session is still inside the inactivity timeout. */
export function isLive(deps: Deps, session: Pick<ApiSession, 'lastActivityAt'>): boolean {
  return session.lastActivityAt > liveCutoff(deps);
}

/** When the session ends unless used again, and how many seconds that is from its last activity. */
export function sessionExpiry(deps: Deps, session: ApiSession): { expiresAt: string; expirationSeconds: number } {
  return {
    expiresAt: new Date(Date.parse(session.lastActivityAt) + timeoutMs(deps)).toISOString(),
    expirationSeconds: deps.config.apiSessionTimeoutMinutes * 60,
  };
}

/**
 * The last time the identity ended all its sessions: its latest disable (`disabledAt`, cleared by enable) or
 * revocation (`sessionsValidFrom`, set by disable and kept by enable). Sessions created before it are dead.
 */
function sessionsEndedAt(identity: Identity): string | undefined {
  return [identity.sessionsValidFrom, identity.disabledAt]
    .filter((instant): instant is string => typeof instant === 'string')
    .sort()
    .at(-1);
}

/**
 * Whether the session has been ended without being removed: its identity is disabled, or ended its sessions after
 * this one began; or the authenticator that opened it is gone. That is fields of the identity, which every request
 * reads anyway, so it holds at once however many sessions are still stored.
 *
 * An authenticator's sessions end with it, as the reference deletes them in its authenticator's delete: however it
 * goes (`DELETE /authenticators/{id}`, a re-enroll, its identity's or its CA's delete, and any way to come), a session
 * it opened (`endsWithAuthenticator`) finds it missing at its next request. The identity's item names its live
 * authenticator of each method (`updbAuthenticatorId`, `certAuthenticatorId`), set and removed by the kit's create and
 * delete of the authenticator in their own transactions (`authenticators.namedOn`), so no path that ends one can
 * forget it; nothing is written per session. A session whose authenticator the identity does not name (an identity
 * stored before it kept them, or the authenticator gone) is judged by the authenticator itself, read under the
 * session's `authenticatorId` (`authenticator`; undefined when not read or not stored). A password change or a
 * certificate extension keeps the authenticator (the same id), and so its sessions, as in the reference: the device
 * that extends its certificate is the one holding them.
 */
export function isRevoked(
  session: ApiSession,
  identity: Identity,
  authenticator: Authenticator | undefined,
  now: Date,
): boolean {
  if (isDisabledAt(identity, now)) return true;
  if (session.endsWithAuthenticator === true && !authenticatorLives(session, identity, authenticator)) return true;
  const endedAt = sessionsEndedAt(identity);
  return endedAt !== undefined && session.createdAt < endedAt;
}

/** Whether the authenticator that opened the session lives: named by its identity, else read and found. */
function authenticatorLives(
  session: ApiSession,
  identity: Identity,
  authenticator: Authenticator | undefined,
): boolean {
  return namesLiveAuthenticator(identity, session.authenticatorId) || authenticator?.id === session.authenticatorId;
}

/** Whether judging the session needs its authenticator read: it ends with one its identity does not name. */
function needsAuthenticator(session: ApiSession, identity: Identity | undefined): boolean {
  return (
    session.endsWithAuthenticator === true &&
    identity !== undefined &&
    !namesLiveAuthenticator(identity, session.authenticatorId)
  );
}

/**
 * The writes that store a new session; the token is returned once and only its hash is kept. A session that needs no
 * more factors is also recorded as a change for the routers (`ctrl-changes.ts`), in the same transaction.
 */
export async function createApiSessionOps(
  deps: Deps,
  input: NewApiSession,
): Promise<{ token: string; session: ApiSession; ops: WriteOp[] }> {
  const id = newId();
  const token = sessionToken(await apiSessionTokenKey(deps.signers.server), {
    sessionId: id,
    identityId: input.identityId,
    ...(input.endsWithAuthenticator && input.kind !== 'oidc' ? { authenticatorId: input.authenticatorId } : {}),
  });
  const now = input.beganAt ?? deps.now();
  const session: ApiSession = {
    id,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    tags: {},
    identityId: input.identityId,
    authenticatorId: input.authenticatorId,
    endsWithAuthenticator: input.endsWithAuthenticator,
    ipAddress: input.ipAddress,
    openedOn: input.openedOn,
    ...(input.kind === undefined ? {} : { kind: input.kind }),
    configTypes: [...input.configTypes],
    isMfaRequired: input.totpPending || input.extJwtPending,
    isMfaComplete: false,
    totpPending: input.totpPending,
    extJwtPending: input.extJwtPending,
    isCertExtendable: input.isCertExtendable ?? false,
    isCertExtendRequested: input.isCertExtendRequested ?? false,
    isCertKeyRollRequested: input.isCertKeyRollRequested ?? false,
    improperClientCertChain: false,
    lastActivityAt: now.toISOString(),
    tokenHash: hashToken(token),
  };
  const ops = putSessionOps(deps.store, session, ttlEpoch(deps, now));
  if (!owesSecondFactor(session)) ops.push(...sessionChangeOps(deps, 'added', session));
  return { token, session, ops };
}

/**
 * The token an OIDC session is stored under, which nobody is given: its holder presents access tokens instead, whose
 * `z_asid` and `sub` name the session and its identity, and this derives the token from them to read it as any
 * session is read. Its authenticator is not carried (the access token names it, the session judges it).
 */
export async function oidcSessionToken(deps: Deps, apiSessionId: string, identityId: string): Promise<string> {
  return sessionToken(await apiSessionTokenKey(deps.signers.server), { sessionId: apiSessionId, identityId });
}

/**
 * The write, for the transaction that spends an OIDC code, that gives its session its first live refresh token
 * (`refreshJti`); only on the session still stored (a code is spent once, in the same transaction).
 */
export function oidcRefreshStartOp(deps: Deps, session: Pick<ApiSession, 'tokenHash'>, jti: string): WriteOp {
  const ended = () => new ApiError('INVALID_AUTH', { message: 'The session of the code has ended.' });
  return setSessionFieldsOp(deps.store, session.tokenHash, { refreshJti: jti }, ended);
}

/**
 * An OIDC refresh: the session's live refresh token `spent` replaced by `next`, and its activity refreshed, in one
 * conditional write (what a legacy session's touch costs). False when the session is gone or idle, or `spent` is not
 * its live refresh token (spent already).
 */
export function rotateOidcRefresh(deps: Deps, session: ApiSession, spent: string, next: string): Promise<boolean> {
  const now = deps.now();
  return rotateRefreshOnSessionItem(deps.store, session.tokenHash, {
    spent,
    next,
    at: now.toISOString(),
    expiresAtEpoch: ttlEpoch(deps, now),
    activeAfter: liveCutoff(deps),
  });
}

/** A stored session item as its document. */
export function toSession(item: Record<string, unknown>): ApiSession {
  return apiSessionSchema.parse(documentOf(item));
}

/**
 * How stale a session's stored last activity may grow before a request refreshes it. A request within this of the
 * last refresh writes nothing; so `lastActivityAt` is exact to this much, and a session idle past the timeout ends
 * between `timeout - TOUCH_INTERVAL_MS` (or half the timeout, if that is less) and `timeout` after its last request (never later than the timeout says: the
 * stored activity decides, and `expiresAt` reports exactly that).
 */
export const TOUCH_INTERVAL_MS = 60_000;

/**
 * How close to its expiry a session must be before an SDK's poll (`GET /current-api-session/service-updates`, once a
 * minute per device) refreshes it. The poll is most of a fleet's requests, and a refresh is a write (4 write units:
 * the item, its copy in the identity's index partition, its activity key), so a poll writes nothing until then: SDKs
 * keep their session alive with a request of their own (the C SDK's `GET /current-api-session` at 1/2 to 5/6 of the
 * session's lifetime, the Go SDK's refresh before `expiresAt`), which touches as every other request does. A client
 * that only polls still keeps its session: its polls refresh it in these last two minutes, two polls' worth. The
 * reference refreshes on every request (in memory, written in batches every 90 s); here that would be a write per
 * poll, about $2.50 a million polls.
 */
export const NEAR_EXPIRY_TOUCH_MS = 2 * 60_000;

/**
 * The touch interval under this controller's timeout: {@link TOUCH_INTERVAL_MS}, but never more than half the timeout,
 * so a session in use is refreshed well before it could expire even with a timeout of a minute or two; a poll's
 * (`nearExpiry`) is the timeout less {@link NEAR_EXPIRY_TOUCH_MS}, never less than that.
 */
function touchIntervalMs(deps: Deps, touch: SessionTouch): number {
  if (touch === 'byCaller') return Number.POSITIVE_INFINITY;
  const interval = Math.min(TOUCH_INTERVAL_MS, timeoutMs(deps) / 2);
  return touch === 'nearExpiry' ? Math.max(interval, timeoutMs(deps) - NEAR_EXPIRY_TOUCH_MS) : interval;
}

/** The live session of a token and its identity: what every authenticated request starts from. */
export interface LiveSession {
  readonly session: ApiSession;
  readonly identity: Identity;
  /** What `CallerReading.alongside` asked for, by item key (`itemKeyOf`): every key asked, undefined where no item is. */
  readonly alongside: ReadonlyMap<string, Record<string, unknown> | undefined>;
}

/**
 * What an operation may ask to be read with its caller: the identity's id and role attributes decide the keys, and the
 * request's clock what the operation already holds (the poll's shared markers).
 */
export type CallerKeys = (
  identity: { readonly id: string; readonly roleAttributes: readonly string[] },
  now: Date,
) => readonly ItemKey[];

/** How a request reads its caller (`resolveCaller` decides it from the route and the operation). */
export interface CallerReading {
  /**
   * Read eventually consistent first (`READS.callerOfRead`, half the units): trusted only when it lets the request
   * through; whatever it would refuse is read again strongly (a missing session alone first), so a session a login has
   * just created, or one that has just completed its second factor, is never refused for a stale read.
   */
  readonly eventual?: boolean;
  /** Whether a partial session (a second factor still owed) passes; if not, an eventual read of one is read again. */
  readonly partialPasses?: boolean;
  /** Items read in the same batch as the session and the identity (their keys from the identity's role attributes). */
  readonly alongside?: CallerKeys;
  /** How often the request refreshes the session's activity (`touchIntervalMs`). */
  readonly touch?: SessionTouch;
}

/**
 * `interval`: at most once per {@link TOUCH_INTERVAL_MS}, as every request. `nearExpiry`: only in the last
 * {@link NEAR_EXPIRY_TOUCH_MS} before the session would expire (an SDK's poll; see `touchIntervalMs`). `byCaller`:
 * never here, the caller's own write refreshes it (an OIDC refresh, {@link rotateOidcRefresh}).
 */
export type SessionTouch = 'interval' | 'nearExpiry' | 'byCaller';

/**
 * The session and identity of a token: a token carrying its identity's id (and its authenticator's, when one opened
 * the session) reads them all in one batch, with whatever the operation reads beside them; the oldest tokens, their
 * session and then the rest. Undefined when the token is unknown, the session is idle past the timeout, or it has been
 * ended (`isRevoked`: its identity deleted, disabled or ending its sessions, its authenticator gone): those sessions
 * are removed now, on a strong read only. The session's activity is refreshed when due (`touchIntervalMs`: one small
 * conditional write), so most requests read one batch and write nothing.
 */
export async function liveSessionOfToken(
  deps: Deps,
  token: string,
  reading: CallerReading = {},
): Promise<LiveSession | undefined> {
  if (reading.eventual) {
    const read = await callerRead(deps, token, 'callerOfRead', reading.alongside);
    const passes = read?.identity && verdictOf(deps, read.session, read) === 'live';
    if (passes && (reading.partialPasses === true || !owesSecondFactor(read.session))) {
      return settled(deps, { ...read, identity: read.identity! }, reading);
    }
    // Found no session (most refusals: a session logged out, ended or removed): only the session can have been stale,
    // one a login has just created, so it alone is read again strongly, and the rest only when it is there after all.
    if (!read && !(await sessionItemOf(deps.store, hashToken(token), 'apiSession'))) return undefined;
  }
  const read = await callerRead(deps, token, 'apiSession', reading.alongside);
  if (!read) return undefined;
  const verdict = verdictOf(deps, read.session, read);
  if (verdict !== 'live' || !read.identity) {
    await deleteApiSession(deps, read.session);
    return undefined;
  }
  return settled(deps, { ...read, identity: read.identity }, reading);
}

/** What a read of the caller found: the session (undefined when none or not this token's) and what it stands on. */
interface CallerRead extends SessionBacking {
  readonly session: ApiSession;
  readonly alongside: Map<string, Record<string, unknown> | undefined>;
}

/**
 * Reads the session of a token, what it stands on and the keys asked alongside, in one batch when the token carries
 * its identity's id (the alongside keys from the role attributes this instance last saw the identity with; any the
 * identity's actual attributes add are read after). Undefined when no session is stored under the token, or the
 * stored one names another identity or authenticator than the token (then it was not issued by this controller).
 */
async function callerRead(
  deps: Deps,
  token: string,
  kind: 'apiSession' | 'callerOfRead',
  alongside: CallerKeys | undefined,
): Promise<CallerRead | undefined> {
  const tokenHash = hashToken(token);
  const carried = idsOfToken(token);
  if (!carried) {
    const item = await sessionItemOf(deps.store, tokenHash, kind);
    if (!item) return undefined;
    // The oldest tokens read nothing alongside: their operation reads what it needs itself.
    const session = toSession(item);
    return { session, ...(await backingOf(deps, session, kind)), alongside: new Map() };
  }
  // One instant for both askings, so what the first left out as held the second does too.
  const now = deps.now();
  const guessed =
    alongside?.({ id: carried.identityId, roleAttributes: roleAttributesSeen(carried.identityId) }, now) ?? [];
  // The authenticator is read with them only when this instance has not seen the identity name it: an identity that
  // keeps its authenticators spares the read (`isRevoked`).
  const authenticatorGuess =
    carried.authenticatorId !== undefined && !namedAuthenticatorSeen(carried.identityId, carried.authenticatorId)
      ? carried.authenticatorId
      : '';
  const read = await deps.store.readTogether(
    [
      { def: identities, id: carried.identityId },
      // An id that fits no key ('') reads nothing: a token with no authenticator costs no read unit for one.
      { def: authenticators, id: authenticatorGuess },
    ],
    [keys.apiSession(tokenHash), ...guessed],
    kind,
  );
  const [item, ...guessedItems] = read.items;
  if (!item) return undefined;
  const session = toSession(item);
  if (session.identityId !== carried.identityId) return undefined;
  if (carried.authenticatorId !== undefined && session.authenticatorId !== carried.authenticatorId) return undefined;
  const identity = read.entities[0]?.doc;
  const found = new Map(guessed.map((key, index) => [itemKeyOf(key), guessedItems[index]]));
  const [authenticator, completedAlongside] = await Promise.all([
    authenticatorGuess === '' && needsAuthenticator(session, identity)
      ? deps.store.get(authenticators, session.authenticatorId, kind)
      : read.entities[1],
    identity && alongside ? completed(deps, found, alongside(identity, now), kind) : found,
  ]);
  return { session, identity, authenticator: authenticator?.doc, alongside: completedAlongside };
}

/** The items `wanted` asks for: those `found` already holds, and the rest read now (an identity's attributes moved). */
async function completed(
  deps: Deps,
  found: Map<string, Record<string, unknown> | undefined>,
  wanted: readonly ItemKey[],
  kind: 'apiSession' | 'callerOfRead',
): Promise<Map<string, Record<string, unknown> | undefined>> {
  const missing = [...new Map(wanted.map((key) => [itemKeyOf(key), key])).entries()].filter(([id]) => !found.has(id));
  if (missing.length === 0) return found;
  const read = await deps.store.readTogether(
    [],
    missing.map(([, key]) => key),
    kind,
  );
  for (const [index, [id]] of missing.entries()) found.set(id, read.items[index]);
  return found;
}

/** Whether a session is live, idle past the timeout, or ended (`isRevoked`, or its identity gone). */
function verdictOf(deps: Deps, session: ApiSession, backing: SessionBacking): 'live' | 'expired' | 'ended' {
  if (!isLive(deps, session)) return 'expired';
  if (!backing.identity || isRevoked(session, backing.identity, backing.authenticator, deps.now())) return 'ended';
  return 'live';
}

/** The live session, its activity refreshed when due, and the identity's attributes remembered for its next request. */
async function settled(
  deps: Deps,
  read: CallerRead & { readonly identity: Identity },
  reading: CallerReading,
): Promise<LiveSession | undefined> {
  rememberIdentity(read.identity);
  const touched = await touchedIfDue(deps, read.session, reading.touch ?? 'interval');
  // A touch that finds the session gone or idle is the table's own answer, whatever the read saw.
  return touched ? { session: touched, identity: read.identity, alongside: read.alongside } : undefined;
}

/**
 * A session read a while ago, as a use now finds it: undefined when it has been idle past the timeout since, else
 * with its activity refreshed when due (undefined when the table finds it gone or idle). For callers that keep what
 * they read in memory and learn of its other ends (logout, revocation) otherwise (`ctrl-channel/dial-cache.ts`).
 */
export async function keptSessionInUse(deps: Deps, session: ApiSession): Promise<ApiSession | undefined> {
  return isLive(deps, session) ? touchedIfDue(deps, session, 'interval') : undefined;
}

/** The session with its activity refreshed when due; undefined when it ended meanwhile. */
async function touchedIfDue(deps: Deps, session: ApiSession, touch: SessionTouch): Promise<ApiSession | undefined> {
  const now = deps.now();
  if (now.getTime() - Date.parse(session.lastActivityAt) < touchIntervalMs(deps, touch)) return session;
  const at = now.toISOString();
  const stillLive = await touchSessionItem(deps.store, session.tokenHash, {
    at,
    expiresAtEpoch: ttlEpoch(deps, now),
    activeAfter: liveCutoff(deps),
  });
  return stillLive ? { ...session, lastActivityAt: at } : undefined;
}

/** What a session stands on: its identity and, for a session that ends with it, the authenticator that opened it. */
interface SessionBacking {
  readonly identity: Identity | undefined;
  readonly authenticator: Authenticator | undefined;
}

/** What the session stands on, in one batch (the authenticator only for a session that ends with it). */
async function backingOf(
  deps: Deps,
  session: ApiSession,
  kind: 'apiSession' | 'callerOfRead' = 'apiSession',
): Promise<SessionBacking> {
  const read = await deps.store.readTogether(
    [
      { def: identities, id: session.identityId },
      { def: authenticators, id: session.endsWithAuthenticator === true ? session.authenticatorId : '' },
    ],
    [],
    kind,
  );
  return { identity: read.entities[0]?.doc, authenticator: read.entities[1]?.doc };
}

/**
 * The session's identity, unless the session has been ended meanwhile (`isRevoked`: its identity deleted, disabled
 * or ending its sessions, its authenticator gone): then the session is removed, and the answer is undefined.
 */
export async function identityOfSession(deps: Deps, session: ApiSession): Promise<Identity | undefined> {
  const backing = await backingOf(deps, session);
  if (backing.identity && !isRevoked(session, backing.identity, backing.authenticator, deps.now())) {
    return backing.identity;
  }
  await deleteApiSession(deps, session);
  return undefined;
}

/** The session with this id (admin operations), or undefined. */
export async function getApiSessionById(deps: Deps, id: string): Promise<ApiSession | undefined> {
  if (!fitsKey(id)) return undefined;
  const item = await sessionItemById(deps.store, id);
  return item ? toSession(item) : undefined;
}

/** Which of these API session ids still name a stored session (their id pointers, read strongly consistently). */
export async function storedApiSessionIds(deps: Deps, ids: readonly string[]): Promise<Set<string>> {
  return sessionIdsStored(deps.store, [...new Set(ids)].filter(fitsKey));
}

/** A removal that found its session already gone: someone else removed it, and counted it down. */
class SessionAlreadyEnded extends ApiError {}

/** How sessions are ended: only if idle by `expiredBy` (the sweep of idle ones). */
interface EndOptions {
  readonly expiredBy?: string;
}

/**
 * The writes that remove sessions: each item (only if still there, and `expiredBy` a cutoff when given) and id pointer,
 * the counter down by as many, and the change that tells the routers. A failed condition cancels all of them and
 * answers `onGone`'s error.
 */
function endOps(
  deps: Deps,
  sessions: readonly SessionRef[],
  onGone: () => ApiError,
  options: EndOptions = {},
): WriteOp[] {
  // Once the removal has committed, the sessions' sessions (Dial/Bind) end and their posture data goes: both only
  // where the session may have any (flags set by the writes that add them).
  const withSessions = sessions.filter((session) => session.hasSessions !== false).map((session) => session.id);
  const withPosture = sessions.filter((session) => session.hasPosture !== false).map((session) => session.id);
  const afterCommit = async () => {
    await Promise.all([
      withSessions.length > 0 ? endSessionsOfApiSessions(deps, withSessions) : undefined,
      withPosture.length > 0 ? removePostureData(deps, withPosture) : undefined,
    ]);
  };
  const ops = removeSessionOps(deps.store, sessions, onGone, {
    ...(options.expiredBy ? { idleBy: options.expiredBy } : {}),
    ...(withSessions.length > 0 || withPosture.length > 0 ? { afterCommit } : {}),
  });
  // The routers are told of every end whose token they may hold (one item for the whole transaction): again, for the
  // sessions a change ended, whose notice told them already (the routers' read of them may have come after this).
  const held = sessions.filter(mayReachRouters);
  if (held.length > 0) ops.push(apiSessionChangeOp(deps.store, 'removed', held.map(changeSubjectOf), deps.now()));
  return ops;
}

/**
 * The write that notes on an API session that it has a session (Dial/Bind), committed with the session's creation:
 * only then does ending the API session look for sessions to end. Conditioned on the API session still existing, so
 * no session is created for an API session that ended meanwhile.
 */
export function markHasSessionsOp(deps: Deps, tokenHash: string): WriteOp {
  return markOp(deps, tokenHash, 'hasSessions');
}

/**
 * The write that records a TOTP code given on a session: it stops waiting for TOTP, and is complete unless it still
 * waits for an external JWT. A session that gave a code has MFA whether its login asked for it or not: verifying an
 * enrollment makes the very session that verified it `isMfaRequired` and `isMfaComplete`, as the reference does, so
 * its user is not sent round the login again. It also notes posture data, which the MFA posture check reads from
 * (`recordMfaPassed`, committed together: one transaction may not update the session item twice).
 */
export function totpPassedOps(deps: Deps, session: ApiSession): WriteOp[] {
  const complete = session.extJwtPending !== true;
  return [
    setSessionFieldsOp(
      deps.store,
      session.tokenHash,
      { totpPending: false, isMfaRequired: true, isMfaComplete: complete, hasPosture: true },
      () => new ApiError('UNAUTHORIZED'),
    ),
    // The code that completes a partial session makes it usable at the routers.
    ...(complete && owesSecondFactor(session) ? sessionChangeOps(deps, 'added', session) : []),
  ];
}

/**
 * The write that records the external JWT an auth policy's `secondary.requireExtJwtSigner` asks for, given by a request
 * of a session that waits for nothing else: the session is complete from then on, so later requests need not bring
 * the token again and its views stop asking for it. Conditioned on TOTP not pending, so a session never reads as
 * complete while it still owes a code.
 */
export function extJwtPassedOps(deps: Deps, session: ApiSession): WriteOp[] {
  return [
    setSessionFieldsOp(
      deps.store,
      session.tokenHash,
      { extJwtPending: false, isMfaComplete: true },
      () => new ApiError('UNAUTHORIZED'),
      { totpPending: false },
    ),
    ...(owesSecondFactor(session) ? sessionChangeOps(deps, 'added', session) : []),
  ];
}

/**
 * The write that records the external JWT a session's auth policy asks for, whatever else it still owes (an OIDC
 * login's client may bring the token before its TOTP code): complete if nothing else is owed ({@link
 * extJwtPassedOps}), else no longer waiting for the token, conditioned on the code still being owed (a code given
 * meanwhile fails it: the token is brought again, and completes the session then).
 */
export function extJwtGivenOps(deps: Deps, session: ApiSession): WriteOp[] {
  if (session.totpPending !== true) return extJwtPassedOps(deps, session);
  return [
    setSessionFieldsOp(deps.store, session.tokenHash, { extJwtPending: false }, () => new ApiError('UNAUTHORIZED'), {
      totpPending: true,
    }),
  ];
}

/**
 * The write that tells the routers a session's certificates changed (an ephemeral certificate issued or deleted),
 * committed with that change: the routers check an SDK's certificate against the session's fingerprints. None for a
 * partial session, which the routers do not know yet.
 */
export function apiSessionUpdatedOps(deps: Deps, session: ApiSession): WriteOp[] {
  return owesSecondFactor(session) ? [] : sessionChangeOps(deps, 'updated', session);
}

/** The same for posture data, committed with the posture data's write. */
export function markHasPostureOp(deps: Deps, tokenHash: string): WriteOp {
  return markOp(deps, tokenHash, 'hasPosture');
}

function markOp(deps: Deps, tokenHash: string, flag: 'hasSessions' | 'hasPosture'): WriteOp {
  return setSessionFieldsOp(deps.store, tokenHash, { [flag]: true }, () => new ApiError('UNAUTHORIZED'));
}

/**
 * Takes one of the session's `max` ephemeral-certificate slots, in the write that counts them (one conditional ADD on
 * the session item), so concurrent requests cannot all pass a count read before any of them wrote. False when all
 * slots are taken. The slot is given back with {@link releaseEphemeralCertificateSlot}.
 */
export async function reserveEphemeralCertificateSlot(deps: Deps, session: ApiSession, max: number): Promise<boolean> {
  const taken = await addToSessionNumber(deps.store, session.tokenHash, 'ephemeralCertificates', 1, { below: max });
  return taken !== undefined;
}

/** Gives back an ephemeral-certificate slot: its certificate was deleted, or never made. */
export async function releaseEphemeralCertificateSlot(deps: Deps, session: ApiSession): Promise<void> {
  await addToSessionNumber(deps.store, session.tokenHash, 'ephemeralCertificates', -1, { above: 0 });
}

/** Wrong MFA codes a partial session may give before it is ended (a guesser must log in again for more). */
export const MAX_CODE_MISSES_PER_SESSION = 5;

/**
 * Counts a wrong MFA code on the session (one atomic ADD, so parallel guesses on one session all count) and ends the
 * session when it has had {@link MAX_CODE_MISSES_PER_SESSION}. True when the session was ended.
 */
export async function recordCodeMissOnSession(deps: Deps, session: ApiSession): Promise<boolean> {
  const misses = await addToSessionNumber(deps.store, session.tokenHash, 'codeMisses', 1);
  // Gone already: ended by someone else.
  if (misses === undefined) return true;
  if (misses < MAX_CODE_MISSES_PER_SESSION) return false;
  await deleteApiSession(deps, session);
  return true;
}

/** Ends a session; its token stops working at once. False when it was already gone. */
export async function deleteApiSession(deps: Deps, session: SessionRef): Promise<boolean> {
  try {
    await deps.store.transact(endOps(deps, [session], () => new SessionAlreadyEnded('NOT_FOUND')));
    return true;
  } catch (error) {
    if (error instanceof SessionAlreadyEnded) return false;
    throw error;
  }
}

/** Items each removed session takes in a transaction: its item and its id pointer. */
const ITEMS_PER_SESSION = 2;

/** Items a removal takes beside its sessions': the counter, and the change that tells the routers. */
const ITEMS_PER_REMOVAL = 2;

/** Most sessions one transaction removes: two items each, the counter and the routers' change. */
export const SESSIONS_PER_TRANSACTION = Math.floor((MAX_TRANSACTION_ITEMS - ITEMS_PER_REMOVAL) / ITEMS_PER_SESSION);

/**
 * Removes sessions met on the way (expired by `options.expiredBy`, or revoked), at most `SESSIONS_PER_TRANSACTION` at
 * a time: one transaction, or one per session when another request removed some of them first.
 */
export async function removeSessions(
  deps: Deps,
  sessions: readonly SessionRef[],
  options: EndOptions = {},
): Promise<void> {
  const batch = sessions.slice(0, SESSIONS_PER_TRANSACTION);
  const gone = () => new SessionAlreadyEnded('NOT_FOUND');
  try {
    await deps.store.transact(endOps(deps, batch, gone, options));
  } catch (error) {
    if (!(error instanceof SessionAlreadyEnded) || batch.length === 1) return ignoreGone(error);
    for (const session of batch) {
      await deps.store.transact(endOps(deps, [session], gone, options)).catch(ignoreGone);
    }
  }
}

function ignoreGone(error: unknown): void {
  if (!(error instanceof SessionAlreadyEnded)) throw error;
}

/**
 * Removes up to a transaction's worth of sessions idle past the timeout, oldest first (the activity index's expired
 * keys, read again strongly): their removal tells the routers (`ctrl-changes.ts`), which hold them until then.
 */
export async function removeExpiredSessions(deps: Deps): Promise<void> {
  const cutoff = liveCutoff(deps);
  const idle = await idleSessionKeys(deps.store, cutoff, SESSIONS_PER_TRANSACTION);
  if (idle.length === 0) return;
  const expired = (await storedSessionRefs(deps, idle)).filter((session) => session.lastActivityAt <= cutoff);
  if (expired.length > 0) await removeSessions(deps, expired, { expiredBy: cutoff });
}

/** What removing the sessions of these keys needs, for those still stored. */
export async function storedSessionRefs(
  deps: Deps,
  sessionPks: readonly string[],
): Promise<(SessionRef & { lastActivityAt: string })[]> {
  const items = await sessionItemsOf(
    deps.store,
    sessionPks,
    'PK, id, lastActivityAt, hasSessions, hasPosture, identityId, authenticatorId, endsWithAuthenticator, openedOn, kind',
  );
  return items.map((item) => ({
    tokenHash: tokenHashOf(String(item.PK)),
    id: String(item.id),
    lastActivityAt: String(item.lastActivityAt),
    hasSessions: item.hasSessions === true,
    hasPosture: item.hasPosture === true,
    identityId: String(item.identityId),
    authenticatorId: String(item.authenticatorId),
    endsWithAuthenticator: item.endsWithAuthenticator === true,
    ...(item.openedOn === 'management' ? { openedOn: 'management' as const } : {}),
    ...(item.kind === 'oidc' ? { kind: 'oidc' as const } : {}),
  }));
}

export type { EndedSessions };

/**
 * Removes from the table the sessions a committed change ended (its `ended` notice), a transaction at a time: all of
 * them for the sweep (`ended-sessions-sweep.ts`), the first `atMost` right after the change commits
 * (`removeEndedSessionsOnCommit`). The sessions ended with the commit, not with their removal: from then on the
 * controller refuses every one of them (`verdictOf` → `isRevoked`: the identity disabled, or its `sessionsValidFrom`
 * past their creation; the identity gone; the authenticator that opened them gone from its identity), and the routers
 * were told by the notice itself (`ctrl-channel/api-session-sync.ts`); each removal tells them again (an endpoint
 * that reads the identity's sessions after this removed them finds them gone). An
 * identity's sessions are not bounded in number (each login adds one): they go in batches of
 * `SESSIONS_PER_TRANSACTION`, the keys read a page at a time, so no batch and no read grows with their number; one
 * already gone (logged out meanwhile) is passed over (`removeSessions`). A failure is thrown.
 */
export async function removeEndedSessions(
  deps: Deps,
  ended: EndedSessions,
  options: { readonly atMost?: number } = {},
): Promise<void> {
  const filter = {
    ...(ended.endedAt === undefined ? {} : { createdBefore: ended.endedAt }),
    ...(ended.authenticatorId === undefined ? {} : { openedBy: ended.authenticatorId }),
  };
  const pending: SessionRef[] = [];
  const removeBatch = () => removeSessions(deps, pending.splice(0, SESSIONS_PER_TRANSACTION));
  let read = 0;
  for await (const page of sessionKeyPagesOfIdentity(deps.store, ended.identityId, filter, SESSIONS_PER_TRANSACTION)) {
    pending.push(...(await storedSessionRefs(deps, page)));
    while (pending.length >= SESSIONS_PER_TRANSACTION) await removeBatch();
    read += page.length;
    if (options.atMost !== undefined && read >= options.atMost) break;
  }
  while (pending.length > 0) await removeBatch();
}

/**
 * Has the functions that end sessions remove, right after each change that ends some commits, the first
 * transaction's worth of them (most identities have no more), so they leave the table and its lists with the change;
 * the request never waits for more, however many (the sweep removes the rest). A failure is logged: the sweep tries.
 */
export function removeEndedSessionsOnCommit(deps: Deps): Deps {
  deps.store.afterSessionsEnded = (ended) => removeEndedSessions(deps, ended, { atMost: SESSIONS_PER_TRANSACTION });
  return deps;
}

/** Whether the identity has a session it has not revoked and not yet idle past the timeout. */
export async function hasLiveApiSession(deps: Deps, identity: Identity): Promise<boolean> {
  if (isDisabledAt(identity, deps.now())) return false;
  return identityHasActiveSession(deps.store, identity.id, liveCutoff(deps), sessionsEndedAt(identity));
}
