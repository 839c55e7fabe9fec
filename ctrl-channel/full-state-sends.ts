import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RouterApiSession, routerApiSessionPages } from '#shared/auth/router-api-sessions.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { ConnectedRouter } from './control-plane.ts';
import { ContentType, Header, type OutgoingMessage } from './message.ts';
import { encodeBody } from './protobuf-codec.ts';

/** Sessions in one `ApiSessionAdded` chunk of a full sync (the reference's size). */
export const SYNC_CHUNK_SIZE = 100;
/** The sync strategy a chunk names (header 1013): the reference's only one. */
export const SYNC_STRATEGY = 'instant';

/**
 * A sync's id (header 1014 `id`): a UUIDv7, whose text orders as its time, since a router that is still assembling a
 * sync drops chunks of a sync whose id compares lower, and gives up the older sync for a higher one.
 */
export function newSyncId(now: Date): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now.getTime(), 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The id of a full state's last entry, above every id this controller makes (`newId`'s alphabet tops out at `z`).
 */
export const PLACEHOLDER_SESSION_ID = '~';

/**
 * How long after a full state its placeholder's removal is sent. The reference router handles each `ApiSessionAdded`
 * and `ApiSessionRemoved` in a goroutine of its own, so a removal sent with the state is, one time in three, handled
 * before the state adds the placeholder (and the placeholder stays until the next full state, harmless but there); it
 * applies a full state about a second after its last chunk.
 */
export const PLACEHOLDER_REMOVAL_DELAY_MS = 5_000;

/**
 * The last entry of every full state: no session, but what makes the router drop every session the state leaves out.
 * The reference router, once it has a full state, drops the sessions missing from it whose id compares at or below
 * the highest id in it (the reference's ids grow with time, so one logged in during the sync is kept: the router
 * counts what it is told during a sync as part of it). This controller's ids are random, so the highest would leave
 * the sessions of higher id where they were: one of another identity's that ended, or one no longer the router's to
 * hold. This entry's id compares above all of them, and its token is random, never a session's (no SDK can present
 * it, and with no certificate fingerprint no SDK's certificate matches it); it is removed once the router has applied
 * the state ({@link PLACEHOLDER_REMOVAL_DELAY_MS}).
 */
function dropEverythingElse(): RouterApiSession {
  return {
    token: randomBytes(32).toString('base64url'),
    certFingerprints: [],
    id: PLACEHOLDER_SESSION_ID,
    identityId: '',
  };
}

/** A chunk of a full sync, headers as the router parses them (it panics on a malformed 1014). */
export function fullSyncChunk(
  syncId: string,
  sequence: number,
  isLast: boolean,
  apiSessions: readonly RouterApiSession[],
): OutgoingMessage {
  return {
    contentType: ContentType.apiSessionAdded,
    headers: new Map([
      [Header.syncStrategyType, Buffer.from(SYNC_STRATEGY)],
      [Header.syncStrategyState, Buffer.from(JSON.stringify({ id: syncId, isLast, sequence }))],
    ]),
    body: encodeBody('edge.ApiSessionAdded', { isFullState: true, apiSessions }),
  };
}

/**
 * Sends a router every live session of the identities it may be asked to check (`reach`): done once the last chunk is
 * sent (or its channel closed); throws if a read fails.
 */
export type FullStateSend = (router: ConnectedRouter, reach: ReadonlySet<string>) => Promise<void>;

/** One router's share of a full state being sent: what it may hold, its chunks' count, and what waits for a chunk. */
interface Recipient {
  readonly reach: ReadonlySet<string>;
  sequence: number;
  pending: RouterApiSession[];
}

/**
 * Full states sent from one read: the full syncs that start within `gatherMs` of the first on this endpoint wait
 * for it, then each takes the sessions of its own reach from the same read, under one sync id, as the read goes (a
 * page at a time, never every session held at once). Routers reconnecting together, as after an endpoint task
 * restarted, would otherwise each read every session. A failed read fails each of its syncs, which each try again on
 * their own (and so may share again).
 */
export function sharedFullStateSends(deps: Deps, tokenKey: () => Promise<Uint8Array>, gatherMs: number): FullStateSend {
  let gathering: { readonly routers: Map<ConnectedRouter, Recipient>; readonly sent: Promise<void> } | undefined;

  async function sendToAll(recipients: ReadonlyMap<ConnectedRouter, Recipient>): Promise<void> {
    const open = () => [...recipients].filter(([router]) => router.channel.closeReason === undefined);
    // Every router of the gathering may have gone while it waited: nothing is read for none.
    if (open().length === 0) return;
    const key = await tokenKey();
    const syncId = newSyncId(deps.now());
    for await (const page of routerApiSessionPages(deps, key, SYNC_CHUNK_SIZE)) {
      for (const [router, recipient] of open()) {
        recipient.pending.push(...page.filter((session) => recipient.reach.has(session.identityId)));
        // A chunk goes once more are known to follow it, so the last one is marked as such.
        while (recipient.pending.length > SYNC_CHUNK_SIZE) {
          router.channel.send(
            fullSyncChunk(syncId, recipient.sequence, false, recipient.pending.slice(0, SYNC_CHUNK_SIZE)),
          );
          recipient.pending = recipient.pending.slice(SYNC_CHUNK_SIZE);
          recipient.sequence += 1;
        }
      }
      if (open().length === 0) return;
    }
    // Sent even when empty (the reference then sends nothing), and closed by the placeholder: the router drops every
    // session it still holds that the state leaves out (ended while it was away, or no longer its to hold).
    for (const [router, recipient] of open()) {
      const placeholder = dropEverythingElse();
      router.channel.send(fullSyncChunk(syncId, recipient.sequence, true, [...recipient.pending, placeholder]));
      const removal = {
        contentType: ContentType.apiSessionRemoved,
        body: encodeBody('edge.ApiSessionRemoved', { tokens: [placeholder.token], ids: [placeholder.id] }),
      };
      // Not awaited: the sync is done once its state is sent. A channel closed meanwhile sends nothing.
      setTimeout(() => router.channel.send(removal), PLACEHOLDER_REMOVAL_DELAY_MS).unref();
    }
  }

  return (router, reach) => {
    const recipient: Recipient = { reach, sequence: 0, pending: [] };
    if (gathering) {
      gathering.routers.set(router, recipient);
      return gathering.sent;
    }
    const routers = new Map([[router, recipient]]);
    const sent = sleep(gatherMs, undefined, { ref: false }).then(() => {
      gathering = undefined;
      return sendToAll(routers);
    });
    gathering = { routers, sent };
    return sent;
  };
}
