import type { ConnectedRouter, ControlFeatureFactory } from './control-plane.ts';
import { type ClientHello, listenersOf } from './edge-listeners.ts';
import { boolHeader, type ChannelMessage, ContentType, Header, type OutgoingMessage } from './message.ts';
import { decodeBody, encodeBody, MalformedBody } from './protobuf-codec.ts';
import { recordSyncStatus } from './sync-status.ts';
import { CTRL_PROTOCOL_VERSION } from './version-info.ts';

/**
 * The edge hello (20000), as the reference's instant sync strategy sends it: its version, that it syncs instantly and
 * keeps a router data model (in the data and in header 1024). A v2 router answers it with its ClientHello.
 */
function serverHello(): OutgoingMessage {
  return {
    contentType: ContentType.serverHello,
    headers: new Map([[Header.routerDataModel, boolHeader(true)]]),
    body: encodeBody('edge.ServerHello', {
      version: CTRL_PROTOCOL_VERSION,
      data: { instant: 'true', routerModel: 'true' },
    }),
  };
}

/**
 * The edge hello: once an edge router's hello is accepted, the controller sends its ServerHello and waits for the
 * router's ClientHello (a reply to it), the only place a router says where SDKs reach it; its host name and edge
 * listeners go to its connection item (`GET /edge-routers`' `hostname` and `supportedProtocols`, a session's router
 * `urls`), and its sync status moves `SYNC_HELLO` → `SYNC_IN_PROGRESS` (the features after this one send its state,
 * and say `SYNC_DONE`: `recordSyncStatus`). A router that does not answer within twice the channel's reply timeout (10
 * s) is `SYNC_HELLO_TIMEOUT`, its channel kept: the features after this one start anyway, and a ClientHello coming
 * later still records the listeners (the status is then the later features'). One ClientHello is read per connection;
 * a malformed or oversized one is logged and `SYNC_ERROR`. Transit routers have no edge: they get no edge hello.
 */
export const edgeHello: ControlFeatureFactory = ({ deps }) => {
  /** Per connection awaiting its ClientHello in time: what ends the wait. */
  const waiting = new WeakMap<ConnectedRouter, () => void>();
  const heard = new WeakSet<ConnectedRouter>();

  async function hear(connected: ConnectedRouter, message: ChannelMessage): Promise<void> {
    const { log } = connected.channel;
    if (heard.has(connected)) {
      log.debug('ctrl channel dropped a repeated ClientHello');
      return;
    }
    heard.add(connected);
    const inTime = waiting.get(connected);
    waiting.delete(connected);
    try {
      let hello: ClientHello;
      try {
        // One of more than 64 KiB is refused undecoded, as malformed (`protobuf-codec.ts`).
        hello = decodeBody<ClientHello>('edge.ClientHello', message.body);
      } catch (error) {
        if (!(error instanceof MalformedBody)) throw error;
        log.malformed(message.contentType, error);
        if (inTime) await recordSyncStatus(deps, connected, 'SYNC_ERROR');
        return;
      }
      const listeners = listenersOf(hello);
      log.info('edge router sent its ClientHello', {
        version: hello.version.slice(0, 64),
        hostname: listeners.hostname,
        protocols: Object.keys(listeners.supportedProtocols),
        inTime: inTime !== undefined,
      });
      await recordSyncStatus(deps, connected, inTime ? 'SYNC_IN_PROGRESS' : undefined, listeners);
    } finally {
      inTime?.();
    }
  }

  return {
    bind(connected) {
      if (connected.router.kind !== 'edge-router') return;
      // The ClientHello replies to the ServerHello, which is sent with no request waiting for it: it comes here.
      connected.channel.handle(ContentType.clientHello, (message) => hear(connected, message));
    },
    async start(connected) {
      if (connected.router.kind !== 'edge-router') return;
      const { channel } = connected;
      // Written while the ServerHello goes out, not before it: a write's latency less per connection. A later status
      // (the ClientHello's, a failure) may land first; this one never replaces it (`recordRouterSync`).
      const helloRecorded = recordSyncStatus(deps, connected, 'SYNC_HELLO');
      const answered = await new Promise<'heard' | 'closed' | 'timeout'>((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(connected);
          resolve('timeout');
        }, 2 * channel.replyTimeoutMs);
        waiting.set(connected, () => {
          clearTimeout(timer);
          resolve('heard');
        });
        channel.onClose(() => {
          clearTimeout(timer);
          waiting.delete(connected);
          resolve('closed');
        });
        channel.send(serverHello());
      });
      await helloRecorded;
      if (answered !== 'timeout') return;
      channel.log.warn('edge router sent no ClientHello in time');
      await recordSyncStatus(deps, connected, 'SYNC_HELLO_TIMEOUT');
    },
  };
};
