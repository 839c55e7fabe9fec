import { setTimeout as sleep } from 'node:timers/promises';
import { removeExpiredSessions } from '#shared/auth/api-session-store.ts';
import { apiSessionTokenKey } from '#shared/auth/api-session-token-key.ts';
import { removedApiSessionPagesOfIdentity, routerApiSessionPagesOfIdentity } from '#shared/auth/router-api-sessions.ts';
import type { CtrlChange, EndedSessions } from '#shared/store/ctrl-changes.ts';
import { messagesFor, type SessionChange, type SessionEvent, sessionEventsOf } from './api-session-events.ts';
import type { ConnectedRouter, ControlContext, ControlFeature, ControlFeatureFactory } from './control-plane.ts';
import { POLL_GRACE_MS } from './ctrl-change-poll.ts';
import { sharedFullStateSends } from './full-state-sends.ts';
import { ContentType } from './message.ts';
import { decodeBody } from './protobuf-codec.ts';
import { identitiesReaching, routersReachedBy } from './router-reach.ts';
import { recordSyncStatus } from './sync-status.ts';

/**
 * The API sessions a v2 router checks SDKs against (it looks the token an SDK presents up in what the controller
 * pushed, and waits at most 5 s for it). A router is sent only what it can be asked to check: the sessions opened on
 * the client API (`mayReachRouters`) of the identities its edge router policies let use it (`router-reach.ts`, the
 * same identities as its data model), never another's, never an admin tool's. Every such live session when the router
 * has come online or asks again (20204), in `ApiSessionAdded` chunks the router assembles; then, from the routers'
 * change log (`ctrl-change-poll.ts`), each login, certificate change and end as it happens, and the sessions of an
 * identity that comes to be allowed to use the router (or the removal of those of one that no longer is). A full sync
 * whose reads fail is tried again a few times, then the channel is closed so the router connects and syncs again;
 * full syncs starting together share one read (`full-state-sends.ts`). The tokens are derived again from the sessions
 * (`session-token.ts`).
 *
 * The router's heartbeats of the sessions its SDKs use (20203) are dropped: SDKs keep their sessions alive with their
 * own requests, and a write per session and minute would cost more than those.
 */

/** The reference router's reasons are a sentence; a router's text is not logged past this. */
const MAX_REASON_LOGGED = 256;
/** How often this endpoint removes sessions idle past the timeout, so routers are told of them (their removal). */
const EXPIRY_SWEEP_MS = 60_000;
/** The most events kept for the syncs starting (each of up to a full sync's chunk of sessions); the oldest go first. */
const RECENT_EVENTS_CAP = 100;
/**
 * How many identities may enter or leave a router's reach at once and be told one by one (each an index read of its
 * sessions); more, and the router is sent a full state of its new reach (one read of every session) instead.
 */
const REACH_STEPS_MAX = 100;
/**
 * How long a router is still told of the ends of an identity's sessions after it left its reach: past the log's
 * grace and a poll, by when every end written before it left has been passed on.
 */
const LEFT_KEPT_MS = 60_000;
/** Sessions of one identity read per page when they are all sent or removed at once. */
const IDENTITY_SESSION_PAGE = 500;
/**
 * How often every router's reach is computed again, whatever the log said: what a missed or early-read change of
 * policies left behind is mended within this (as a router's data model renewal mends its identities).
 */
const REACH_REFRESH_MS = 5 * 60_000;

export interface ApiSessionSyncOptions {
  /** How a failed full sync is tried again: the waits before each further attempt (one attempt more than waits). */
  readonly fullSyncRetryDelaysMs: readonly number[];
  /** How long a full sync waits for others starting after it, to send them all from one read. */
  readonly fullSyncGatherMs: number;
  /**
   * How long what the log passed on is kept for the full syncs starting after it (by this endpoint's clock, from when
   * it was passed on): the full state's read of the sessions (an index, eventually consistent) may not show a session
   * written a moment before it, whose change the routers already synced were told of and a router starting its sync
   * was not.
   */
  readonly recentChangesMs: number;
  /**
   * How long after a change of policies, of an identity's reach or a change that ended sessions it is handled once
   * more: the indexes it reads (policies, an identity's sessions) may lag a moment behind the write that logged it.
   */
  readonly settleMs: number;
}

const DEFAULT_OPTIONS: ApiSessionSyncOptions = {
  // Throttling or a failing dependency passes in seconds, or is not passing soon.
  fullSyncRetryDelaysMs: [1_000, 2_000, 4_000],
  // Short beside the 5 s a router waits for an SDK's session; long enough for routers reconnecting together.
  fullSyncGatherMs: 250,
  // The poll's grace: a write that old is read by the index as surely as by the poll.
  recentChangesMs: POLL_GRACE_MS,
  settleMs: POLL_GRACE_MS,
};

/**
 * A router's state here: in a full sync (what the log tells it waits until the sync is sent), or synced, with the
 * identities whose sessions it holds.
 */
interface RouterSync {
  /**
   * The identities the router may be asked to check, whose sessions it is sent: set by each full sync as it reads the
   * state, then kept in step with the log's changes of reach. Undefined until the first full sync has read it.
   */
  reach: Set<string> | undefined;
  /** Identities that left the reach lately, with when (`RouterReach.left`); forgotten after `LEFT_KEPT_MS`. */
  readonly left: Map<string, number>;
  /**
   * Events held while a full sync is being sent, from what the log passed on just before it started (which its read
   * may not show yet); undefined once it is. Each is filtered by the reach the full state was sent with.
   */
  held: SessionEvent[] | undefined;
  /** A resync asked for while one runs (by the router, or by a change of its reach): it runs once more after. */
  again: boolean;
  /** Settles once the full state and what was held are sent (or the channel closed), or rejects when it failed. */
  done: Promise<void>;
}

/**
 * The feature. A full sync whose reads fail (throttling, any read error) is tried again after each of
 * `fullSyncRetryDelaysMs`, under a new sync id (the router gives up a partial sync for a higher id); what changed
 * meanwhile stays held, and is sent only after a full state. When every attempt failed, the channel is closed: the
 * router would otherwise stay connected and shown online without its sessions, refusing the SDKs it lacks, and with
 * nothing sent it never asks again itself (it asks only when a sync it assembles stalls). Closed, it reconnects with
 * its own back-off and the new connection, perhaps on another endpoint task, syncs from the start; the events held
 * for it are dropped (the new full state has them), never sent on top of a state it did not get.
 */
export function apiSessionSyncFeature(options: Partial<ApiSessionSyncOptions> = {}): ControlFeatureFactory {
  return (context) => syncFeature(context, { ...DEFAULT_OPTIONS, ...options });
}

export const apiSessionSync: ControlFeatureFactory = apiSessionSyncFeature();

function syncFeature(context: ControlContext, options: ApiSessionSyncOptions): ControlFeature {
  const { deps } = context;
  const tokenKey = () => apiSessionTokenKey(deps.signers.server);
  const sendFullState = sharedFullStateSends(deps, tokenKey, options.fullSyncGatherMs);
  const syncs = new Map<ConnectedRouter, RouterSync>();
  /**
   * What the log passed on in the last `recentChangesMs`, oldest first, with when: a full sync that starts holds it,
   * to send after its full state. Sent again to a router whose state already has it, it is harmless (as the reference
   * router v2.0.0-pre12 treats them, `router/state`): an `ApiSessionAdded` or `Updated` sets the session by its token,
   * replacing the same session; an `ApiSessionRemoved` of a token it does not hold is ignored. In the order passed
   * on, a session added then removed stays removed.
   */
  const recent: { at: number; event: SessionEvent }[] = [];
  let lastSweep = 0;
  let lastReachRefresh = deps.now().getTime();
  const timers = new Set<NodeJS.Timeout>();

  const detailOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
  /** A failure serving one router: its channel's bounded log. */
  const warn = (event: string, router: ConnectedRouter, error: unknown) =>
    router.channel.log.failed(event, { detail: detailOf(error) });

  /** Runs `task` once more after `settleMs` (the indexes it reads may lag the write it follows). */
  function settleLater(event: string, task: () => Promise<void>): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      task().catch((error: unknown) => deps.logger.warn(event, { detail: detailOf(error) }));
    }, options.settleMs);
    timer.unref();
    timers.add(timer);
  }

  /**
   * Sends every live session the router may hold in chunks; then what changed meanwhile. Asked for while one runs, it
   * runs once more after, and the asker waits for that same sync: a start that meets a resync the router asked for
   * before it came online records the sync's outcome, not SYNC_DONE at once. Rejects when the full state could not be
   * sent: the router is then left out of what the log passes on, its held events dropped.
   */
  function fullSync(router: ConnectedRouter): Promise<void> {
    const running = syncs.get(router);
    if (running?.held) {
      running.again = true;
      return running.done;
    }
    const sync: RouterSync = {
      reach: running?.reach,
      left: running?.left ?? new Map(),
      held: recentEvents(),
      again: false,
      done: Promise.resolve(),
    };
    syncs.set(router, sync);
    sync.done = sendUntilSynced(router, sync);
    return sync.done;
  }

  async function sendUntilSynced(router: ConnectedRouter, sync: RouterSync): Promise<void> {
    try {
      do {
        sync.again = false;
        await sendFullStateRetrying(router, sync);
      } while (sync.again && router.channel.closeReason === undefined);
    } catch (error) {
      if (syncs.get(router) === sync) syncs.delete(router);
      throw error;
    }
    const held = sync.held ?? [];
    sync.held = undefined;
    const reach = { reach: sync.reach ?? new Set<string>(), left: sync.left };
    for (const event of held) for (const message of messagesFor(reach, event)) router.channel.send(message);
  }

  /**
   * The router's reach read again and its full state sent, tried again after each of the back-off's waits; the last
   * attempt's failure is thrown.
   */
  async function sendFullStateRetrying(router: ConnectedRouter, sync: RouterSync): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        sync.reach = new Set(await identitiesReaching(deps, router.router));
        await sendFullState(router, sync.reach);
        return;
      } catch (error) {
        const delayMs = options.fullSyncRetryDelaysMs[attempt];
        if (delayMs === undefined || router.channel.closeReason !== undefined) throw error;
        warn('api session full sync failed, trying again', router, error);
        await sleep(delayMs, undefined, { ref: false });
        if (router.channel.closeReason !== undefined) return;
      }
    }
  }

  /** Closes the channel of a router whose full sync failed, so that it connects and syncs again (see the feature). */
  function closeUnsynced(router: ConnectedRouter, error: unknown): void {
    // The start and a resync asked for meanwhile both wait for one sync, and hear of its failure both.
    if (router.channel.closeReason !== undefined) return;
    warn('api session full sync failed, closing the channel', router, error);
    router.channel.close('the API session sync failed: the router is to connect and sync again');
  }

  /** A full sync the controller starts (the router's reach changed); a failure closes the channel, as any. */
  function resync(router: ConnectedRouter): void {
    fullSync(router).catch((error: unknown) => closeUnsynced(router, error));
  }

  /** Drops what the log passed on longer ago than `recentChangesMs`. */
  function forgetOldRecent(): void {
    const since = deps.now().getTime() - options.recentChangesMs;
    const kept = recent.findIndex((entry) => entry.at >= since);
    recent.splice(0, kept === -1 ? recent.length : kept);
  }

  /** What the log passed on within `recentChangesMs`, for a full sync starting: held, sent after its state. */
  function recentEvents(): SessionEvent[] {
    forgetOldRecent();
    return recent.map((entry) => entry.event);
  }

  /** Tells one router an event: held while its full state is being sent, else sent as its reach filters it. */
  function tell(router: ConnectedRouter, event: SessionEvent): void {
    const sync = syncs.get(router);
    if (!sync) return;
    if (sync.held) sync.held.push(event);
    else {
      const reach = { reach: sync.reach ?? new Set<string>(), left: sync.left };
      for (const message of messagesFor(reach, event)) router.channel.send(message);
    }
  }

  /** Tells every router an event (each what its reach takes of it), and keeps it for the syncs starting. */
  function passOn(event: SessionEvent): void {
    recent.push({ at: deps.now().getTime(), event });
    if (recent.length > RECENT_EVENTS_CAP) recent.splice(0, recent.length - RECENT_EVENTS_CAP);
    for (const router of syncs.keys()) tell(router, event);
  }

  /** Whether a router here may hold sessions of the identity (a router still reading its reach may). */
  function anyRouterReaches(identityId: string): boolean {
    return [...syncs.values()].some(
      (sync) => sync.reach === undefined || sync.reach.has(identityId) || sync.left.has(identityId),
    );
  }

  /** Tells the routers of sessions a committed change ended: the identity's, found in its index partition. */
  async function tellEnded(ended: EndedSessions): Promise<void> {
    if (!anyRouterReaches(ended.identityId)) return;
    const filter = {
      ...(ended.endedAt === undefined ? {} : { createdBefore: ended.endedAt }),
      ...(ended.authenticatorId === undefined ? {} : { openedBy: ended.authenticatorId }),
    };
    const key = await tokenKey();
    for await (const sessions of removedApiSessionPagesOfIdentity(
      deps,
      key,
      ended.identityId,
      filter,
      IDENTITY_SESSION_PAGE,
    )) {
      passOn({ kind: 'removed', sessions });
    }
  }

  /** Tells the routers the sessions of an identity whose certificate changed, with their certificates now. */
  async function tellCertificates(identityId: string): Promise<void> {
    if (!anyRouterReaches(identityId)) return;
    const key = await tokenKey();
    for await (const sessions of routerApiSessionPagesOfIdentity(deps, key, identityId, IDENTITY_SESSION_PAGE)) {
      passOn({ kind: 'updated', sessions });
    }
  }

  /** Tells routers to drop an identity's sessions, then stops sending them its sessions (it no longer reaches them). */
  async function identityLeft(routers: readonly ConnectedRouter[], identityId: string): Promise<void> {
    const key = await tokenKey();
    for await (const sessions of removedApiSessionPagesOfIdentity(deps, key, identityId, {}, IDENTITY_SESSION_PAGE)) {
      for (const router of routers) tell(router, { kind: 'removed', sessions });
    }
    // After the removals, which the reach filters: the routers held these sessions until now. Ends of theirs come on
    // for a while (a session removed just before this read, whose end the log has not passed on yet).
    const now = deps.now().getTime();
    for (const router of routers) {
      const sync = syncs.get(router);
      sync?.reach?.delete(identityId);
      sync?.left.set(identityId, now);
    }
  }

  /** Sends routers an identity's sessions from now on, starting with those it has (it came to reach them). */
  async function identityEntered(routers: readonly ConnectedRouter[], identityId: string): Promise<void> {
    for (const router of routers) syncs.get(router)?.reach?.add(identityId);
    const key = await tokenKey();
    for await (const sessions of routerApiSessionPagesOfIdentity(deps, key, identityId, IDENTITY_SESSION_PAGE)) {
      for (const router of routers) tell(router, { kind: 'added', sessions });
    }
  }

  /**
   * Brings the routers here in step with which of them the identity may use now: a router it came to reach is sent its
   * sessions, one it no longer reaches told to drop them. A router in a full sync syncs once more after it instead,
   * with its reach read again.
   */
  async function applyIdentityReach(identityId: string): Promise<void> {
    if (syncs.size === 0) return;
    const reached = await routersReachedBy(deps, identityId);
    const entering: ConnectedRouter[] = [];
    const leaving: ConnectedRouter[] = [];
    for (const [router, sync] of syncs) {
      const allowed = reached.has(router.router.id);
      if (sync.reach === undefined || allowed === sync.reach.has(identityId)) continue;
      if (sync.held) sync.again = true;
      else (allowed ? entering : leaving).push(router);
    }
    if (leaving.length > 0) await identityLeft(leaving, identityId);
    if (entering.length > 0) await identityEntered(entering, identityId);
  }

  /**
   * Reads every router's reach again (a policy or a router's attributes changed, or it is time) and brings each in
   * step: the identities that left or entered it one by one, as an identity's own change does, or, past
   * `REACH_STEPS_MAX` of them (a new policy for everyone), a full state of its new reach, which drops at once what it
   * should no longer hold.
   */
  async function refreshReach(): Promise<void> {
    lastReachRefresh = deps.now().getTime();
    for (const [router, sync] of [...syncs]) {
      if (sync.held) {
        sync.again = true;
        continue;
      }
      const reach = new Set(await identitiesReaching(deps, router.router));
      const current = syncs.get(router);
      if (current !== sync || current.held || current.reach === undefined) continue;
      const known = current.reach;
      const leaving = [...known].filter((identityId) => !reach.has(identityId));
      const entering = [...reach].filter((identityId) => !known.has(identityId));
      if (leaving.length + entering.length > REACH_STEPS_MAX) {
        resync(router);
        continue;
      }
      for (const identityId of leaving) await identityLeft([router], identityId);
      for (const identityId of entering) await identityEntered([router], identityId);
    }
  }

  /** Passes one page of the log on, in its order: runs of session changes as events, the rest one by one. */
  async function handleChanges(changes: readonly CtrlChange[]): Promise<void> {
    let run: SessionChange[] = [];
    const flush = async () => {
      if (run.length === 0) return;
      const events = await sessionEventsOf(deps, await tokenKey(), run);
      run = [];
      for (const event of events) passOn(event);
    };
    for (const change of changes) {
      switch (change.kind) {
        case 'added':
        case 'updated':
        case 'removed':
          run.push(change);
          break;
        case 'ended':
          await flush();
          await tellEnded(change.ended);
          settleLater('ended api sessions not passed on', () => tellEnded(change.ended));
          break;
        case 'certificates':
          await flush();
          await tellCertificates(change.identityId);
          break;
        case 'reach': {
          await flush();
          const { identityId } = change;
          if (identityId === undefined) {
            await refreshReach();
            settleLater('router reach not refreshed', refreshReach);
          } else {
            await applyIdentityReach(identityId);
            settleLater('identity reach not applied', () => applyIdentityReach(identityId));
          }
          break;
        }
        default:
          break;
      }
    }
    await flush();
  }

  /** After each poll: the idle sessions' sweep, and every router's reach read again, each when due. */
  async function afterPoll(): Promise<void> {
    forgetOldRecent();
    const leftBefore = deps.now().getTime() - LEFT_KEPT_MS;
    for (const sync of syncs.values()) {
      for (const [identityId, at] of sync.left) if (at < leftBefore) sync.left.delete(identityId);
    }
    if (syncs.size === 0) return;
    const now = deps.now().getTime();
    if (now - lastSweep >= EXPIRY_SWEEP_MS) {
      lastSweep = now;
      await removeExpiredSessions(deps);
    }
    if (now - lastReachRefresh >= REACH_REFRESH_MS) await refreshReach();
  }

  context.changes.listen(handleChanges);
  context.changes.afterEachPoll(afterPoll);

  return {
    bind(router) {
      // A transit router has no edge: no SDK connects to it, and it is sent no API session (as the reference's broker
      // leaves a router that is no edge router out of its sync).
      if (router.router.kind !== 'edge-router') return;
      router.channel.handle(ContentType.requestClientReSync, (message) => {
        // A request that does not decode is dropped, as the reference drops it, and counted by the channel.
        const { reason } = decodeBody<{ reason: string }>('edge.RequestClientReSync', message.body);
        router.channel.log.info('router asked for an api session resync', {
          reason: reason.slice(0, MAX_REASON_LOGGED),
        });
        resync(router);
      });
      router.channel.onClose(() => syncs.delete(router));
    },
    async start(router) {
      if (router.channel.closeReason !== undefined || router.router.kind !== 'edge-router') return;
      const done = fullSync(router);
      try {
        await done;
      } catch (error) {
        if (router.channel.closeReason !== undefined) return;
        await recordSyncStatus(deps, router, 'SYNC_ERROR');
        closeUnsynced(router, error);
        return;
      }
      // A sync ends early, unsent, when the channel closes: the connection is over, with no status to record.
      if (router.channel.closeReason !== undefined) return;
      // The edge sync is its API sessions (the data model follows the router's own subscription): sent, it is done.
      await recordSyncStatus(deps, router, 'SYNC_DONE');
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      syncs.clear();
      recent.length = 0;
    },
  };
}
