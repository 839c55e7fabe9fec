import { timingSafeEqual, X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { Deps } from '#shared/ports/deps.ts';
import { putEndpointAddress, readEndpointAddress, removeEndpointAddress } from '#shared/store/endpoint-items.ts';
import { Channel, type ChannelTimings, DEFAULT_CHANNEL_TIMINGS } from './channel.ts';
import { encodeMessage, FrameDecoder, ROUTER_FRAME_LIMITS } from './frame-codec.ts';
import { boolHeader, type ChannelMessage, type OutgoingMessage, uint32Header, uint32Of } from './message.ts';

/**
 * Messages for routers held by another endpoint process (mesh design G.1.2, step 9). Routers connect to one ECS task
 * each, through the load balancer; a circuit whose path crosses routers on several tasks is routed by the task of the
 * dialing router, which sends the others' Routes (and later Unroutes) through the task holding each: over a TLS
 * connection between the two tasks, both presenting the controller's server certificate, each refusing a peer whose
 * public key is not the controller's own (every task holds that key, nothing else does). The same channel as the
 * routers' carries it (frames, heartbeats, request and reply): a `forward` names the router and carries the message
 * whole, as a frame; the reply to one that wants it carries the router's reply whole, or the failure.
 *
 * Each endpoint with a relay registers where it listens (`shared/store/endpoint-items.ts`) before it accepts routers,
 * and renews the lease while it runs; the others read it when they first relay to it, and dial it again after a
 * connection closes.
 */

export const RELAY_ALPN = 'ziti-ctrl-relay';

/** The relay's own content types and headers, outside the reference's ranges. */
export const RelayContentType = { forward: 7_700_001, forwarded: 7_700_002 } as const;
const RelayHeader = { routerId: 7_700_100, wantsReply: 7_700_101, timeoutMs: 7_700_102, failure: 7_700_103 } as const;

/** How long a relayed request waits beyond the router's own time: the hop between the tasks. */
const RELAY_MARGIN_MS = 2_000;
/** How long the registration's lease runs, and how often it is renewed. */
export const ENDPOINT_LEASE_MS = 90_000;
const ENDPOINT_RENEW_MS = 30_000;

/** A relayed message that could not reach its router, or whose router did not answer. */
export class RelayFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RelayFailure';
  }
}

export interface RelayOptions {
  readonly deps: Deps;
  readonly endpointId: string;
  /** The controller's server key and certificate chain (PEM): what every task holds. */
  readonly tls: { readonly key: string; readonly cert: string };
  /** Where the other tasks reach this one (its private address) and the port to listen on (0: any free one). */
  readonly host: string;
  readonly port: number;
  /** The routers connected here: a forward reaches only those. */
  readonly connected: (routerId: string) => { readonly channel: Channel } | undefined;
  readonly timings?: ChannelTimings;
}

export interface EndpointRelay {
  /** Listens and registers; resolves with the port listened on. */
  start(): Promise<number>;
  /** Sends a message to a router held by another endpoint. */
  send(endpointId: string, routerId: string, message: OutgoingMessage): Promise<void>;
  /** Sends a request to a router held by another endpoint and resolves with the router's reply. */
  request(endpointId: string, routerId: string, message: OutgoingMessage, timeoutMs: number): Promise<ChannelMessage>;
  /** Takes the renewed certificate (the endpoint's periodic refresh). */
  setSecureContext(tls: { readonly key: string; readonly cert: string }): void;
  close(): Promise<void>;
}

const spkiOf = (certificate: X509Certificate) => certificate.publicKey.export({ type: 'spki', format: 'der' });

/** Whether the peer presented the controller's own public key. */
function isControllerPeer(socket: TLSSocket, own: Buffer): boolean {
  const peer = socket.getPeerX509Certificate();
  if (!peer) return false;
  const key = spkiOf(peer);
  return key.length === own.length && timingSafeEqual(key, own);
}

/** The message a frame carries (a forward's body, a forwarded reply's). */
function messageOf(frame: Buffer): ChannelMessage {
  const [message] = new FrameDecoder(ROUTER_FRAME_LIMITS).push(frame);
  if (!message) throw new RelayFailure('a relayed frame carried no whole message');
  return message;
}

const frameOf = (message: OutgoingMessage) =>
  encodeMessage({
    contentType: message.contentType,
    sequence: 0,
    headers: message.headers ?? new Map(),
    body: message.body ?? Buffer.alloc(0),
  });

export function createEndpointRelay(options: RelayOptions): EndpointRelay {
  const { deps, endpointId } = options;
  const timings = options.timings ?? DEFAULT_CHANNEL_TIMINGS;
  const logger = deps.logger.detached({ endpointId, relay: true });
  let tls = options.tls;
  let ownKey = spkiOf(new X509Certificate(tls.cert));
  const peers = new Map<string, Promise<Channel>>();
  const accepted = new Set<Channel>();
  let renewal: NodeJS.Timeout | undefined;
  let listenedOn = 0;

  const server = createServer({
    key: tls.key,
    cert: tls.cert,
    requestCert: true,
    rejectUnauthorized: false,
    ALPNProtocols: [RELAY_ALPN],
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol !== RELAY_ALPN || !isControllerPeer(socket, ownKey)) {
      logger.warn('ctrl relay refused a connection: not another endpoint of this controller', {
        remoteAddress: socket.remoteAddress,
      });
      socket.destroy();
      return;
    }
    const channel = new Channel(socket, new FrameDecoder(ROUTER_FRAME_LIMITS), timings, logger);
    accepted.add(channel);
    channel.onClose(() => accepted.delete(channel));
    channel.handle(RelayContentType.forward, (request) => forwardHere(channel, request));
  });
  server.on('tlsClientError', () => undefined);

  /** A forward from another endpoint: to the router connected here, and its reply back when wanted. */
  async function forwardHere(channel: Channel, request: ChannelMessage): Promise<void> {
    const routerId = request.headers.get(RelayHeader.routerId)?.toString() ?? '';
    const wantsReply = request.headers.get(RelayHeader.wantsReply)?.[0] === 1;
    const fail = (reason: string) => {
      if (wantsReply) {
        channel.reply(request, {
          contentType: RelayContentType.forwarded,
          headers: new Map([[RelayHeader.failure, Buffer.from(reason)]]),
        });
      }
    };
    const router = options.connected(routerId);
    if (!router) return fail(`router ${routerId} is not connected to endpoint ${endpointId}`);
    try {
      const inner = messageOf(request.body);
      const outgoing = { contentType: inner.contentType, headers: inner.headers, body: inner.body };
      if (!wantsReply) {
        router.channel.send(outgoing);
        return;
      }
      const timeoutMs = uint32Of(request, RelayHeader.timeoutMs) ?? timings.replyTimeoutMs;
      const reply = await router.channel.request(outgoing, timeoutMs);
      channel.reply(request, { contentType: RelayContentType.forwarded, body: frameOf(reply) });
    } catch (error) {
      fail(`router ${routerId} did not answer: ${(error as Error).message}`);
    }
  }

  /** The channel to another endpoint, dialed on first use and again after it closed. */
  function peer(otherId: string): Promise<Channel> {
    const open = peers.get(otherId);
    if (open) return open;
    const dialing = dialPeer(otherId);
    peers.set(otherId, dialing);
    dialing.then(
      (channel) => channel.onClose(() => peers.get(otherId) === dialing && peers.delete(otherId)),
      () => peers.get(otherId) === dialing && peers.delete(otherId),
    );
    return dialing;
  }

  async function dialPeer(otherId: string): Promise<Channel> {
    const address = await readEndpointAddress(deps.store, otherId, deps.now());
    if (!address) throw new RelayFailure(`endpoint ${otherId} is not running (no live registration)`);
    const socket = await new Promise<TLSSocket>((resolve, reject) => {
      const dialed = connect({
        host: address.host,
        port: address.port,
        key: tls.key,
        cert: tls.cert,
        ALPNProtocols: [RELAY_ALPN],
        // The peer is pinned to the controller's key below, not checked against a CA or a name.
        rejectUnauthorized: false,
      });
      const timer = setTimeout(() => dialed.destroy(new Error('connect timed out')), timings.replyTimeoutMs);
      dialed.once('secureConnect', () => {
        clearTimeout(timer);
        resolve(dialed);
      });
      dialed.once('error', (error) => {
        clearTimeout(timer);
        reject(new RelayFailure(`endpoint ${otherId} at ${address.host}:${address.port}: ${error.message}`));
      });
    });
    if (!isControllerPeer(socket, ownKey)) {
      socket.destroy();
      throw new RelayFailure(`endpoint ${otherId} at ${address.host}:${address.port} is not this controller's`);
    }
    return new Channel(socket, new FrameDecoder(ROUTER_FRAME_LIMITS), timings, logger);
  }

  async function register(): Promise<void> {
    await putEndpointAddress(deps.store, {
      endpointId,
      host: options.host,
      port: listenedOn,
      leaseExpiresAt: deps.now().getTime() + ENDPOINT_LEASE_MS,
    });
  }

  return {
    async start() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, () => resolve());
      });
      listenedOn = (server.address() as AddressInfo).port;
      await register();
      renewal = setInterval(() => {
        register().catch((error: Error) =>
          logger.warn('ctrl relay registration not renewed', { detail: error.message }),
        );
      }, ENDPOINT_RENEW_MS);
      renewal.unref();
      return listenedOn;
    },
    async send(otherId, routerId, message) {
      const channel = await peer(otherId);
      channel.send({
        contentType: RelayContentType.forward,
        headers: new Map([[RelayHeader.routerId, Buffer.from(routerId)]]),
        body: frameOf(message),
      });
    },
    async request(otherId, routerId, message, timeoutMs) {
      const channel = await peer(otherId);
      const reply = await channel.request(
        {
          contentType: RelayContentType.forward,
          headers: new Map([
            [RelayHeader.routerId, Buffer.from(routerId)],
            [RelayHeader.wantsReply, boolHeader(true)],
            [RelayHeader.timeoutMs, uint32Header(timeoutMs)],
          ]),
          body: frameOf(message),
        },
        timeoutMs + RELAY_MARGIN_MS,
      );
      const failure = reply.headers.get(RelayHeader.failure);
      if (failure) throw new RelayFailure(failure.toString());
      return messageOf(reply.body);
    },
    setSecureContext(next) {
      tls = next;
      ownKey = spkiOf(new X509Certificate(next.cert));
      server.setSecureContext({ key: next.key, cert: next.cert });
    },
    async close() {
      if (renewal) clearInterval(renewal);
      for (const dialing of peers.values())
        dialing.then(
          (channel) => channel.close('the endpoint is closing'),
          () => {},
        );
      peers.clear();
      for (const channel of accepted) channel.close('the endpoint is closing');
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await removeEndpointAddress(deps.store, endpointId).catch(() => undefined);
    },
  };
}
