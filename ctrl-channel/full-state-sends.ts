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

/** Sends a router every live session: done once the last chunk is sent (or its channel closed); throws if a read fails. */
export type FullStateSend = (router: ConnectedRouter) => Promise<void>;

/**
 * Full states sent from one read: the full syncs that start within `gatherMs` of the first on this endpoint wait
 * for it, then take the same chunks, under one sync id, as the read goes (a page at a time, never every session held
 * at once). Routers reconnecting together, as after an endpoint task restarted, would otherwise each read every
 * session. A failed read fails each of its syncs, which each try again on their own (and so may share again).
 */
export function sharedFullStateSends(deps: Deps, tokenKey: () => Promise<Uint8Array>, gatherMs: number): FullStateSend {
  let gathering: { readonly routers: Set<ConnectedRouter>; readonly sent: Promise<void> } | undefined;

  async function sendToAll(routers: ReadonlySet<ConnectedRouter>): Promise<void> {
    const open = () => [...routers].filter((router) => router.channel.closeReason === undefined);
    const send = (message: OutgoingMessage) => {
      for (const router of open()) router.channel.send(message);
    };
    // Every router of the gathering may have gone while it waited: nothing is read for none.
    if (open().length === 0) return;
    const key = await tokenKey();
    const syncId = newSyncId(deps.now());
    let sequence = 0;
    let pending: RouterApiSession[] = [];
    for await (const page of routerApiSessionPages(deps, key, SYNC_CHUNK_SIZE)) {
      pending.push(...page);
      // A chunk goes once more are known to follow it, so the last one is marked as such.
      while (pending.length > SYNC_CHUNK_SIZE) {
        send(fullSyncChunk(syncId, sequence, false, pending.slice(0, SYNC_CHUNK_SIZE)));
        pending = pending.slice(SYNC_CHUNK_SIZE);
        sequence += 1;
      }
      if (open().length === 0) return;
    }
    // Sent even when empty (the reference then sends nothing): the router drops the sessions it still holds from
    // before, which ended while it was away.
    send(fullSyncChunk(syncId, sequence, true, pending));
  }

  return (router) => {
    if (gathering) {
      gathering.routers.add(router);
      return gathering.sent;
    }
    const routers = new Set([router]);
    const sent = sleep(gatherMs, undefined, { ref: false }).then(() => {
      gathering = undefined;
      return sendToAll(routers);
    });
    gathering = { routers, sent };
    return sent;
  };
}
