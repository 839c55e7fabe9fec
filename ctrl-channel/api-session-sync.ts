import { setTimeout as sleep } from 'node:timers/promises';
import { removeExpiredSessions } from '#shared/auth/api-session-store.ts';
import { apiSessionTokenKey } from '#shared/auth/api-session-token-key.ts';
import {
  type RouterApiSession,
  removedTokensOf,
  routerApiSessionsOfChanged,
} from '#shared/auth/router-api-sessions.ts';
import type { Deps } from '#shared/ports/deps.ts';
import {
  type ApiSessionChange,
  type ApiSessionChangeKind,
  apiSessionChangePages,
} from '#shared/store/api-session-changes.ts';
import type { ConnectedRouter, ControlContext, ControlFeature, ControlFeatureFactory } from './control-plane.ts';
import { SYNC_CHUNK_SIZE, SYNC_STRATEGY, sharedFullStateSends } from './full-state-sends.ts';
import { ContentType, Header, type OutgoingMessage } from './message.ts';
import { decodeBody, encodeBody } from './protobuf-codec.ts';
import { recordSyncStatus } from './sync-status.ts';

/**
 * The API sessions a v2 router checks SDKs against (it looks the token an SDK presents up in what the controller
 * pushed, and waits at most 5 s for it): every live one when the router has come online or asks again (20204), in
 * `ApiSessionAdded` chunks the router assembles; then each login, certificate change and end as it happens, which any
 * function may write and this endpoint learns from the table's recent changes (`api-session-changes.ts`), polled
 * about once a second while it has routers. A full sync whose reads fail is tried again a few times, then the
 * channel is closed so the router connects and syncs again; full syncs starting together share one read
 * (`full-state-sends.ts`). The tokens are derived again from the sessions (`session-token.ts`).
 *
 * The router's heartbeats of the sessions its SDKs use (20203) are dropped: SDKs keep their sessions alive with their
 * own requests, and a write per session and minute would cost more than those.
 */

/** How often the recent changes are read while this endpoint has routers. */
export const POLL_INTERVAL_MS = 1_000;
/**
 * How far before the last poll's instant each poll reads again: a change is written with the instant its transaction
 * was built (by its writer's clock), and may commit and become readable a moment later, after a poll past that
 * instant; this covers the transaction's own latency and retries, the eventually consistent read, and the writers'
 * clocks differing from this one's. Changes seen are skipped, so each is passed on once; each is read a few times.
 * The last poll's instant, not the newest change seen, is the mark: the last changes of a burst would otherwise be
 * read again by every poll until a newer change came.
 */
export const POLL_GRACE_MS = 3_000;
/** How far back a poll reads at most: the first, and one after polls failed or the endpoint had no routers. */
const POLL_WINDOW_MS = 10_000;
/** The changes a poll reads in one page (each page passed on before the next is read). */
export const CHANGE_PAGE_SIZE = 100;
/** How often this endpoint removes sessions idle past the timeout, so routers are told of them (their removal). */
const EXPIRY_SWEEP_MS = 60_000;
/** The most messages kept for the syncs starting (each of up to a full sync's chunk of sessions); the oldest go first. */
const RECENT_MESSAGES_CAP = 100;
/** The reference router's reasons are a sentence; a router's text is not logged past this. */
const MAX_REASON_LOGGED = 256;

/**
 * What these changes tell the routers, in their order: the sessions added or updated read again as they are now, all
 * in one batch (a session gone, partial or ended meanwhile is left out), each removal's tokens derived; consecutive
 * changes of one kind go in one message, as many sessions as a full sync's chunk.
 */
async function messagesOf(
  deps: Deps,
  tokenKey: Uint8Array,
  changes: readonly ApiSessionChange[],
): Promise<OutgoingMessage[]> {
  const upserted = changes.filter((change) => change.kind !== 'removed').flatMap((change) => change.sessions);
  const current = new Map(
    (upserted.length > 0 ? await routerApiSessionsOfChanged(deps, tokenKey, upserted) : []).map((session) => [
      session.id,
      session,
    ]),
  );
  const runs: {
    kind: ApiSessionChangeKind;
    sessions: RouterApiSession[];
    removed: { tokens: string[]; ids: string[] };
  }[] = [];
  for (const change of changes) {
    let run = runs.at(-1);
    const size = run ? run.sessions.length + run.removed.ids.length : 0;
    if (!run || run.kind !== change.kind || size >= SYNC_CHUNK_SIZE) {
      run = { kind: change.kind, sessions: [], removed: { tokens: [], ids: [] } };
      runs.push(run);
    }
    if (change.kind === 'removed') {
      const removed = removedTokensOf(tokenKey, change.sessions);
      run.removed.tokens.push(...removed.tokens);
      run.removed.ids.push(...removed.ids);
    } else {
      run.sessions.push(...change.sessions.flatMap((subject) => current.get(subject.id) ?? []));
    }
  }
  return runs.flatMap((run) => {
    const message = messageOfRun(run.kind, run.sessions, run.removed);
    return message ? [message] : [];
  });
}

function messageOfRun(
  kind: ApiSessionChangeKind,
  apiSessions: readonly RouterApiSession[],
  removed: { tokens: string[]; ids: string[] },
): OutgoingMessage | undefined {
  if (kind === 'removed') {
    if (removed.tokens.length === 0) return undefined;
    return { contentType: ContentType.apiSessionRemoved, body: encodeBody('edge.ApiSessionRemoved', removed) };
  }
  if (apiSessions.length === 0) return undefined;
  const headers = new Map([[Header.syncStrategyType, Buffer.from(SYNC_STRATEGY)]]);
  if (kind === 'updated') {
    return {
      contentType: ContentType.apiSessionUpdated,
      headers,
      body: encodeBody('edge.ApiSessionUpdated', { apiSessions }),
    };
  }
  return {
    contentType: ContentType.apiSessionAdded,
    headers,
    body: encodeBody('edge.ApiSessionAdded', { isFullState: false, apiSessions }),
  };
}

export interface ApiSessionSyncOptions {
  /** How a failed full sync is tried again: the waits before each further attempt (one attempt more than waits). */
  readonly fullSyncRetryDelaysMs: readonly number[];
  /** How long a full sync waits for others starting after it, to send them all from one read. */
  readonly fullSyncGatherMs: number;
  /**
   * How long what a poll passed on is kept for the full syncs starting after it (by this endpoint's clock, from when
   * it was passed on): the full state's read of the sessions (an index, eventually consistent) may not show a session
   * written a moment before it, whose change the routers already synced were told of and a router starting its sync
   * was not.
   */
  readonly recentChangesMs: number;
}

const DEFAULT_OPTIONS: ApiSessionSyncOptions = {
  // Throttling or a failing dependency passes in seconds, or is not passing soon.
  fullSyncRetryDelaysMs: [1_000, 2_000, 4_000],
  // Short beside the 5 s a router waits for an SDK's session; long enough for routers reconnecting together.
  fullSyncGatherMs: 250,
  // The poll's grace: a write that old is read by the index as surely as by the poll.
  recentChangesMs: POLL_GRACE_MS,
};

/** A router's state here: in a full sync (what the changes tell it waits until the sync is sent), or synced. */
interface RouterSync {
  /**
   * Messages held while a full sync is being sent, from what the polls passed on just before it started (which its
   * read may not show yet); undefined once it is.
   */
  held: OutgoingMessage[] | undefined;
  /** A resync asked for while one runs: it runs once more after. */
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
 * its own back-off and the new connection, perhaps on another endpoint task, syncs from the start; the changes held
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
  /** Changes already passed on, by key, with when they were written: the grace's reads see them again. */
  const seen = new Map<string, number>();
  /**
   * What the polls passed on in the last `recentChangesMs`, oldest first, with when: a full sync that starts holds
   * it, to send after its full state. Sent again to a router whose state already has it, it is harmless (as the
   * reference router v2.0.0-pre12 treats them, `router/state`): an `ApiSessionAdded` or `Updated` sets the session by
   * its token, replacing the same session; an `ApiSessionRemoved` of a token it does not hold is ignored. In the order
   * passed on, a session added then removed stays removed.
   */
  const recent: { at: number; message: OutgoingMessage }[] = [];
  /** Where the next poll reads from (epoch ms): the last poll's instant less the grace; undefined before the first. */
  let readFrom: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastSweep = 0;

  const detailOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
  const warn = (event: string, router: ConnectedRouter, error: unknown) =>
    router.channel.log.failed(event, { detail: detailOf(error) });

  /**
   * Sends every live session in chunks; then what changed meanwhile. Asked for while one runs, it runs once more
   * after, and the asker waits for that same sync: a start that meets a resync the router asked for before it came
   * online records the sync's outcome, not SYNC_DONE at once. Rejects when the full state could not be sent: the
   * router is then left out of what the polls pass on, its held changes dropped.
   */
  function fullSync(router: ConnectedRouter): Promise<void> {
    const running = syncs.get(router);
    if (running?.held) {
      running.again = true;
      return running.done;
    }
    const sync: RouterSync = { held: recentMessages(), again: false, done: Promise.resolve() };
    syncs.set(router, sync);
    sync.done = sendUntilSynced(router, sync);
    return sync.done;
  }

  async function sendUntilSynced(router: ConnectedRouter, sync: RouterSync): Promise<void> {
    try {
      do {
        sync.again = false;
        await sendFullStateRetrying(router);
      } while (sync.again && router.channel.closeReason === undefined);
    } catch (error) {
      if (syncs.get(router) === sync) syncs.delete(router);
      throw error;
    }
    const held = sync.held ?? [];
    sync.held = undefined;
    for (const message of held) router.channel.send(message);
  }

  /** The full state, tried again after each of the back-off's waits; the last attempt's failure is thrown. */
  async function sendFullStateRetrying(router: ConnectedRouter): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await sendFullState(router);
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

  /** Passes on the changes written since the last poll (less the grace), each once, a page at a time. */
  async function poll(): Promise<void> {
    const now = deps.now().getTime();
    const from = Math.max(readFrom ?? 0, now - POLL_WINDOW_MS);
    for await (const changes of apiSessionChangePages(deps.store, new Date(from), new Date(now), CHANGE_PAGE_SIZE)) {
      const fresh = changes.filter((change) => !seen.has(change.key));
      if (fresh.length === 0) continue;
      const messages = await messagesOf(deps, await tokenKey(), fresh);
      for (const change of fresh) seen.set(change.key, Date.parse(change.at));
      for (const message of messages) passOn(message);
    }
    // Moved on only once every page was passed on: after a failed poll the next reads the same changes again.
    readFrom = now - POLL_GRACE_MS;
    for (const [key, at] of seen) if (at < readFrom) seen.delete(key);
    forgetOldRecent();
    if (now - lastSweep >= EXPIRY_SWEEP_MS) {
      lastSweep = now;
      await removeExpiredSessions(deps);
    }
  }

  /** Drops what the polls passed on longer ago than `recentChangesMs`. */
  function forgetOldRecent(): void {
    const since = deps.now().getTime() - options.recentChangesMs;
    const kept = recent.findIndex((entry) => entry.at >= since);
    recent.splice(0, kept === -1 ? recent.length : kept);
  }

  /** What the polls passed on within `recentChangesMs`, for a full sync starting: held, sent after its state. */
  function recentMessages(): OutgoingMessage[] {
    forgetOldRecent();
    return recent.map((entry) => entry.message);
  }

  function passOn(message: OutgoingMessage): void {
    recent.push({ at: deps.now().getTime(), message });
    if (recent.length > RECENT_MESSAGES_CAP) recent.splice(0, recent.length - RECENT_MESSAGES_CAP);
    for (const router of context.routers()) {
      const held = syncs.get(router)?.held;
      if (held) held.push(message);
      else if (syncs.has(router)) router.channel.send(message);
    }
  }

  /** Polls while this endpoint has routers: each poll after the last has ended, so they never overlap. */
  function schedule(): void {
    if (timer !== undefined) return;
    timer = setTimeout(() => {
      poll()
        .catch((error: unknown) => deps.logger.warn('api session changes not read', { detail: detailOf(error) }))
        .finally(() => {
          timer = undefined;
          if (syncs.size > 0) schedule();
        });
    }, POLL_INTERVAL_MS);
    timer.unref();
  }

  return {
    bind(router) {
      router.channel.handle(ContentType.requestClientReSync, (message) => {
        // A request that does not decode is dropped, as the reference drops it, and counted by the channel.
        const { reason } = decodeBody<{ reason: string }>('edge.RequestClientReSync', message.body);
        router.channel.log.info('router asked for an api session resync', {
          reason: reason.slice(0, MAX_REASON_LOGGED),
        });
        fullSync(router).catch((error: unknown) => closeUnsynced(router, error));
      });
      router.channel.onClose(() => syncs.delete(router));
    },
    async start(router) {
      if (router.channel.closeReason !== undefined) return;
      const done = fullSync(router);
      schedule();
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
      clearTimeout(timer);
      timer = undefined;
      syncs.clear();
      recent.length = 0;
    },
  };
}
