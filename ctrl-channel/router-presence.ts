import type { Deps } from '#shared/ports/deps.ts';
import type { RouterCollection } from '#shared/store/mesh-notices.ts';
import { type RouterConnection, readAllRouterConnections } from '#shared/store/router-connections.ts';
import type { CtrlChangePoll } from './ctrl-change-poll.ts';

/** A router's presence as an endpoint knows it: its last connection, whether it is online, what its peers are told. */
export interface PeerPresence {
  readonly routerId: string;
  readonly collection: RouterCollection;
  readonly connectionId: string;
  /** The endpoint process holding (or that held) its channel. */
  readonly endpointId: string;
  readonly connectedAt: string;
  readonly online: boolean;
  /** The software version its hello reported. */
  readonly version: string;
  /** Its link listeners, each a `ctrl.Listener` as the router encoded it. */
  readonly linkListeners: readonly Buffer[];
}

/**
 * Every router's presence, as one endpoint knows it, whichever endpoint holds the router: the links between routers
 * need it (a router is told of its peers, a link is usable while both its routers are online). Kept from three
 * sources, so that several endpoints agree without talking to each other:
 *
 * - the routers connected here, at once (`connectedHere`, `disconnectedHere`);
 * - the change log's `router-connected` and `router-disconnected` notices, which every endpoint writes with its
 *   routers' connections (a second or few late);
 * - every router's connection item, read again every `refreshMs` while this endpoint has routers: a dead endpoint
 *   writes no notice, and its routers are seen offline once the leases it renewed run out.
 *
 * A router is online from when its connection is recorded until it ends or its lease is seen run out; a newer
 * connection replaces an older one, never the reverse, so notices and reads arriving out of order settle on the same
 * state. When the table cannot be read, what was known stays as it was (nothing goes offline for a failed read).
 */
export interface RouterPresence {
  /** A router's presence; undefined when this endpoint never heard of its connection. */
  get(routerId: string): PeerPresence | undefined;
  isOnline(routerId: string): boolean;
  /** The routers online now. */
  online(): PeerPresence[];
  /** Resolves once every router's connection has been read within `refreshMs` (at once when it has). */
  current(): Promise<void>;
  /** Hears of each router whose presence changed: it came online, went offline, connected again, reported anew. */
  onChange(listener: (presence: PeerPresence) => void): void;
  /** The router's connection to this endpoint was recorded: it is online. */
  connectedHere(presence: Omit<PeerPresence, 'online'>): void;
  /** The router's connection to this endpoint ended. */
  disconnectedHere(routerId: string, connectionId: string): void;
}

/** How often every router's connection is read again: within this a dead endpoint's routers are seen offline. */
export const PRESENCE_REFRESH_MS = 10_000;

/** How many ended connections are remembered (a few bytes each): far more than routers reconnect between reads. */
const ENDED_KEPT = 10_000;

export interface RouterPresenceOptions {
  readonly refreshMs: number;
}

function decodedListeners(encoded: readonly string[] | undefined): Buffer[] {
  return (encoded ?? []).map((listener) => Buffer.from(listener, 'base64'));
}

function sameListeners(a: readonly Buffer[], b: readonly Buffer[]): boolean {
  return a.length === b.length && a.every((listener, index) => listener.equals(b[index]!));
}

/** Whether anything a peer is told of the router changed. */
function differs(before: PeerPresence | undefined, after: PeerPresence): boolean {
  return (
    before === undefined ||
    before.online !== after.online ||
    before.connectionId !== after.connectionId ||
    before.version !== after.version ||
    !sameListeners(before.linkListeners, after.linkListeners)
  );
}

export function createRouterPresence(
  deps: Deps,
  changes: CtrlChangePoll,
  options: RouterPresenceOptions = { refreshMs: PRESENCE_REFRESH_MS },
): RouterPresence {
  const routers = new Map<string, PeerPresence>();
  /**
   * Connections known to have ended (not merely their lease seen run out): they never come online again, even when
   * their end is heard of before their start. The oldest are forgotten past {@link ENDED_KEPT}.
   */
  const ended = new Set<string>();
  const endConnection = (connectionId: string) => {
    ended.add(connectionId);
    if (ended.size > ENDED_KEPT) ended.delete(ended.values().next().value!);
  };
  const listeners: ((presence: PeerPresence) => void)[] = [];
  /** When every connection was last read (this endpoint's clock), and the read running. */
  let readAt: number | undefined;
  let reading: Promise<void> | undefined;

  /**
   * Takes what a source says of a router's connection, unless it is of an older connection than the one known, or
   * says online a connection that ended (an index read a moment behind the end).
   */
  function apply(next: PeerPresence): void {
    const known = routers.get(next.routerId);
    if (known && known.connectionId !== next.connectionId && next.connectedAt < known.connectedAt) return;
    if (next.online && ended.has(next.connectionId)) return;
    routers.set(next.routerId, next);
    if (!differs(known, next)) return;
    for (const listener of listeners) {
      try {
        listener(next);
      } catch (error) {
        deps.logger.warn('router presence listener failed', { detail: (error as Error).message });
      }
    }
  }

  function fromConnection(collection: RouterCollection, connection: RouterConnection, now: number): PeerPresence {
    return {
      routerId: connection.routerId,
      collection,
      connectionId: connection.connectionId,
      endpointId: connection.endpointId,
      connectedAt: connection.connectedAt,
      online: connection.leaseExpiresAt > now,
      version: connection.version,
      linkListeners: decodedListeners(connection.linkListeners),
    };
  }

  async function readAll(): Promise<void> {
    const startedAt = deps.now().getTime();
    const connections = await readAllRouterConnections(deps.store);
    const now = deps.now().getTime();
    const stored = new Set<string>();
    for (const { collection, connection } of connections) {
      stored.add(connection.routerId);
      apply(fromConnection(collection, connection, now));
    }
    // A router whose item is gone was deleted (its item goes with it): offline. Unless it connected so lately that the
    // index may not show it yet.
    for (const known of routers.values()) {
      const settled = Date.parse(known.connectedAt) < startedAt - options.refreshMs;
      if (!stored.has(known.routerId) && known.online && settled) end(known);
    }
    readAt = startedAt;
  }

  function read(): Promise<void> {
    reading ??= readAll().finally(() => {
      reading = undefined;
    });
    return reading;
  }

  function end(known: PeerPresence): void {
    endConnection(known.connectionId);
    apply({ ...known, online: false });
  }

  const isFresh = () => readAt !== undefined && deps.now().getTime() - readAt < options.refreshMs;

  changes.listen(async (page) => {
    for (const change of page) {
      if (change.kind === 'router-connected') {
        apply({
          routerId: change.routerId,
          collection: change.collection,
          connectionId: change.connectionId,
          endpointId: change.endpointId,
          connectedAt: change.connectedAt,
          online: change.leaseExpiresAt > deps.now().getTime(),
          version: change.version,
          linkListeners: decodedListeners(change.linkListeners),
        });
      } else if (change.kind === 'router-disconnected') {
        const known = routers.get(change.routerId);
        if (known?.connectionId === change.connectionId) end(known);
        else endConnection(change.connectionId);
      }
    }
  });
  changes.afterEachPoll(async () => {
    if (!isFresh()) await read();
  });

  return {
    get: (routerId) => routers.get(routerId),
    isOnline: (routerId) => routers.get(routerId)?.online === true,
    online: () => [...routers.values()].filter((presence) => presence.online),
    current: () => (isFresh() ? Promise.resolve() : read()),
    onChange: (listener) => listeners.push(listener),
    connectedHere: (presence) => apply({ ...presence, online: true }),
    disconnectedHere(routerId, connectionId) {
      const known = routers.get(routerId);
      if (known?.connectionId === connectionId) end(known);
    },
  };
}
