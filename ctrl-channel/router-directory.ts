import type { Logger } from '#shared/log/logger.ts';
import type { Channel } from './channel.ts';
import type { EndpointRelay } from './endpoint-relay.ts';
import type { ChannelMessage, OutgoingMessage } from './message.ts';
import type { RouterPresence } from './router-presence.ts';

/**
 * Where a message for a router goes: its channel when it is connected to this endpoint process, else through the
 * endpoint holding it (`endpoint-relay.ts`), as the routers' presence names it. What routes and ends circuits speaks
 * to every router of a path through this, wherever each is connected (mesh design step 9).
 */
export interface RouterDirectory {
  /** Whether a message can reach the router: connected here, or online on another endpoint this one relays to. */
  reaches(routerId: string): boolean;
  /** Sends a message to the router; a relayed one that cannot reach it is logged, as a closed channel drops it. */
  send(routerId: string, message: OutgoingMessage): void;
  /** Sends a request to the router and resolves with its reply; rejects when no reply comes in time. */
  request(routerId: string, message: OutgoingMessage, timeoutMs: number): Promise<ChannelMessage>;
}

export function createRouterDirectory(options: {
  readonly endpointId: string;
  readonly connected: (routerId: string) => { readonly channel: Channel } | undefined;
  readonly presence: Pick<RouterPresence, 'get'>;
  readonly relay: EndpointRelay | undefined;
  readonly logger: Pick<Logger, 'warn'>;
}): RouterDirectory {
  const { connected, presence, relay } = options;
  /** The other endpoint holding an online router, when there is a relay to it. */
  const holderOf = (routerId: string) => {
    const seen = presence.get(routerId);
    return relay && seen?.online && seen.endpointId !== options.endpointId ? seen.endpointId : undefined;
  };
  return {
    reaches(routerId) {
      return connected(routerId) !== undefined || holderOf(routerId) !== undefined;
    },
    send(routerId, message) {
      const here = connected(routerId);
      if (here) {
        here.channel.send(message);
        return;
      }
      const holder = holderOf(routerId);
      if (!holder || !relay) return;
      relay.send(holder, routerId, message).catch((error: Error) =>
        options.logger.warn('ctrl relay could not send to a router', {
          routerId,
          endpointId: holder,
          contentType: message.contentType,
          detail: error.message,
        }),
      );
    },
    async request(routerId, message, timeoutMs) {
      const here = connected(routerId);
      if (here) return here.channel.request(message, timeoutMs);
      const holder = holderOf(routerId);
      if (!holder || !relay) throw new Error(`router ${routerId} is connected to no endpoint this one reaches`);
      return relay.request(holder, routerId, message, timeoutMs);
    },
  };
}
