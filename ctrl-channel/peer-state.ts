import { edgeRouters } from '#shared/entities/edge-router.ts';
import { transitRouters } from '#shared/entities/router.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { fitsKey } from '#shared/store/keys.ts';
import type { ConnectedRouter, ControlFeatureFactory } from './control-plane.ts';
import { ContentType } from './message.ts';
import { encodeBodyWithEncoded } from './protobuf-codec.ts';
import type { RouterPresence } from './router-presence.ts';

/** How long a send whose reads failed waits before it is tried again. */
const RETRY_MS = 1_000;

/** What a router is told of one peer. */
type PeerState = 'Healthy' | 'Unhealthy' | 'Removed';

/** One router's pending news: the peers whose state changed since it was last told, and whether a send runs. */
interface PeerNews {
  readonly dirty: Set<string>;
  sending: boolean;
  /** False until its first message (every peer online) is due: changes before it are in it. */
  started: boolean;
  retry?: NodeJS.Timeout;
}

async function routerExists(deps: Deps, routerId: string): Promise<boolean> {
  if (!fitsKey(routerId)) return false;
  return (
    (await deps.store.get(edgeRouters, routerId)) !== undefined ||
    (await deps.store.get(transitRouters, routerId)) !== undefined
  );
}

/**
 * The PeerStateChanges body telling of `peerIds` as they are now: Healthy, with its version and link listeners (as
 * its hello carried them, byte for byte), a peer online; Unhealthy one that exists but is not; Removed one that is
 * gone.
 */
async function peerStatesBody(deps: Deps, presence: RouterPresence, peerIds: readonly string[]) {
  const changes: Buffer[] = [];
  const counts: Record<PeerState, number> = { Healthy: 0, Unhealthy: 0, Removed: 0 };
  for (const id of peerIds) {
    const peer = presence.get(id);
    const online = peer?.online === true;
    const state: PeerState = online ? 'Healthy' : (await routerExists(deps, id)) ? 'Unhealthy' : 'Removed';
    counts[state] += 1;
    const fields = { id, version: online ? peer.version : '', state };
    changes.push(encodeBodyWithEncoded('ctrl.PeerStateChange', 'listeners', online ? peer.linkListeners : [], fields));
  }
  return { body: encodeBodyWithEncoded('ctrl.PeerStateChanges', 'changes', changes, {}), counts };
}

/**
 * Routers learn their peers from the controller (PeerStateChanges, 1050), which is how links form: a router dials the
 * link listeners of each Healthy peer whose groups meet its dialers', backs off from an Unhealthy one, and drops a
 * Removed one and its links. As the reference does, a router is told, once its hello is accepted, of every router
 * online (whichever endpoint holds it: `router-presence.ts`), and after that of each router whose presence changed —
 * connected, disconnected, connected again, its lease seen run out, deleted — each change once, coalesced with those
 * that came while a message was being made (one send at a time per router). The state is taken when the message is
 * made, so what a router hears last is the peer's state as it is. A send whose reads fail (whether an offline peer
 * still exists) is tried again a second later.
 */
export const peerStates: ControlFeatureFactory = (context) => {
  const { deps, presence } = context;
  const news = new Map<ConnectedRouter, PeerNews>();

  async function send(router: ConnectedRouter, pending: PeerNews): Promise<void> {
    if (pending.sending) return;
    pending.sending = true;
    try {
      while (pending.dirty.size > 0 && router.channel.closeReason === undefined) {
        const peerIds = [...pending.dirty];
        pending.dirty.clear();
        let made: Awaited<ReturnType<typeof peerStatesBody>>;
        try {
          made = await peerStatesBody(deps, presence, peerIds);
        } catch (error) {
          for (const id of peerIds) pending.dirty.add(id);
          router.channel.log.failed('ctrl channel peer states not sent', { detail: (error as Error).message });
          clearTimeout(pending.retry);
          pending.retry = setTimeout(() => void send(router, pending), RETRY_MS);
          pending.retry.unref();
          return;
        }
        router.channel.send({ contentType: ContentType.peerStateChanges, body: made.body });
        // Debug: every router's connect and disconnect is told to every other router, a line each at info.
        router.channel.log.debug('ctrl channel sent peer states', made.counts);
      }
    } finally {
      pending.sending = false;
    }
  }

  /** Tells every router here (but the peer itself) of a peer whose state changed. */
  function changed(peerId: string): void {
    for (const [router, pending] of news) {
      if (!pending.started || router.router.id === peerId) continue;
      pending.dirty.add(peerId);
      void send(router, pending);
    }
  }

  presence.onChange((peer) => changed(peer.routerId));
  // A router deleted while offline changes no presence: its peers are told it is gone all the same.
  context.changes.listen(async (page) => {
    for (const change of page) {
      if (change.kind === 'router-ended' && !presence.isOnline(change.routerId)) changed(change.routerId);
    }
  });

  return {
    bind(router) {
      news.set(router, { dirty: new Set(), sending: false, started: false });
      router.channel.onClose(() => {
        clearTimeout(news.get(router)?.retry);
        news.delete(router);
      });
    },
    async start(router) {
      const pending = news.get(router);
      if (!pending) return;
      // Every router's connection read lately, so routers held by other endpoints are among those it is told of (when
      // the read fails, those known already; the next read's changes follow).
      await presence
        .current()
        .catch((error: Error) => router.channel.log.failed('ctrl channel peers not read', { detail: error.message }));
      pending.started = true;
      for (const peer of presence.online()) if (peer.routerId !== router.router.id) pending.dirty.add(peer.routerId);
      await send(router, pending);
    },
  };
};
