import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentType, Header } from '#ctrl-channel/message.ts';
import { peerStates } from '#ctrl-channel/peer-state.ts';
import { decodeBody, encodeBody, encodedElementsOf } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerRevocation } from '#ctrl-channel/router-revocation.ts';
import { putRouterConnection } from '#shared/store/router-connections.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  dialCtrl,
  enrolledRouter,
  fingerprintOfCredentials,
  type RouterEnd,
  routerConnectionOf,
  routerHelloHeaders,
} from '../support/ctrl-router.ts';
import { type SecondEndpoint, startSecondEndpoint } from '../support/second-endpoint.ts';

/**
 * PeerStateChanges (1050, issue 37): how a router learns its peers, and so whom it links to. Scripted routers on the
 * test controller's endpoint and on a second endpoint process (the same table), as routers on two ECS tasks.
 */
const features = [routerRevocation, routerInterfaces, peerStates];
/** Every router's connection read again every 2 s (10 s outside tests), so a lapsed lease is seen soon. */
const PRESENCE_REFRESH_MS = 2_000;
const { controller, call } = useAdminController(
  {},
  { ctrlFeatures: features, ctrlPresenceRefreshMs: PRESENCE_REFRESH_MS },
);

let second: SecondEndpoint;
beforeAll(async () => {
  second = await startSecondEndpoint(controller(), { features, presenceRefreshMs: PRESENCE_REFRESH_MS });
});
afterAll(async () => {
  await second?.close();
});

let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;

interface PeerStateChange {
  id: string;
  version: string;
  state: 'Healthy' | 'Unhealthy' | 'Removed';
  /** Each listener's bytes as the message carried them. */
  listeners: Buffer[];
}

/**
 * A link listener as the reference router encodes one in its hello, with every field set and one this controller's
 * schema does not know (number 9, as a newer router might add): its peers must get it as it is.
 */
function listenerBytes(port: number): Buffer {
  const known = encodeBody('ctrl.Listener', {
    address: `tls:peer.links.test:${port}`,
    protocol: 'tls',
    costTags: ['metered'],
    groups: ['west', 'east'],
    localBinding: 'eth1',
  });
  const newer = protobuf.Writer.create()
    .uint32((9 << 3) | 2)
    .string('a field of a later version')
    .finish();
  return Buffer.concat([known, Buffer.from(newer)]);
}

/** The hello headers of a router listening for links on `listeners` (header 1000: a `ctrl.Listeners` of them). */
function helloListening(listeners: readonly Buffer[]): Map<number, Buffer> {
  const headers = routerHelloHeaders();
  const writer = protobuf.Writer.create();
  for (const listener of listeners) writer.uint32((1 << 3) | 2).bytes(listener);
  headers.set(Header.listeners, Buffer.from(writer.finish()));
  return headers;
}

/** A router's end: every PeerStateChange it was sent, in order, as it would apply them. */
class PeerView {
  readonly changes: PeerStateChange[] = [];
  readonly messages: number[] = [];
  readonly end: RouterEnd;
  constructor(end: RouterEnd) {
    this.end = end;
  }

  /** Reads until `found` finds what it looks for among the changes so far (at most `timeoutMs`). */
  async until(what: string, found: (changes: readonly PeerStateChange[]) => boolean, timeoutMs = 8_000) {
    const deadline = Date.now() + timeoutMs;
    while (!found(this.changes)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what}: not told within ${timeoutMs} ms (${JSON.stringify(this.summary())})`);
      let message: Awaited<ReturnType<RouterEnd['next']>>;
      try {
        message = await this.end.next(left);
      } catch {
        continue;
      }
      if (message.contentType !== ContentType.peerStateChanges) continue;
      this.messages.push(this.changes.length);
      for (const raw of encodedElementsOf('ctrl.PeerStateChanges', 'changes', message.body, 10_000).elements) {
        const change = decodeBody<PeerStateChange>('ctrl.PeerStateChange', raw);
        const listeners = encodedElementsOf('ctrl.PeerStateChange', 'listeners', raw, 100).elements;
        this.changes.push({ id: change.id, version: change.version, state: change.state, listeners });
      }
    }
  }

  /** The last state it was told of a peer. */
  last(peerId: string): PeerStateChange | undefined {
    return this.changes.findLast((change) => change.id === peerId);
  }

  summary() {
    return this.changes.map(({ id, state }) => `${id}:${state}`);
  }
}

/** A router connected (to the test controller's endpoint, or another's port), past its hello. */
async function connected(
  router: { id: string; credentials: Credentials },
  headers = routerHelloHeaders(),
  port?: number,
): Promise<PeerView> {
  const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true, ...(port ? { port } : {}) });
  const answer = await end.hello(router.id, headers);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
  return new PeerView(end);
}

const router = (collection: 'edge-routers' | 'transit-routers') =>
  enrolledRouter(controller, call, unique(collection === 'edge-routers' ? 'edge' : 'transit'), collection);

describe('peer states', () => {
  it('tells a router that connects of every router online, and them of it, its link listeners byte for byte', async () => {
    const a = await router('edge-routers');
    const b = await router('transit-routers');
    const aListeners = [listenerBytes(13101), listenerBytes(13102)];
    const bListeners = [listenerBytes(13103)];
    const aEnd = await connected(a, helloListening(aListeners));

    const bEnd = await connected(b, helloListening(bListeners));

    await bEnd.until('a, Healthy', (changes) => changes.some((change) => change.id === a.id));
    expect(bEnd.messages[0], 'in its first message').toBe(0);
    expect(bEnd.last(a.id)).toEqual({ id: a.id, version: 'v2.0.0-pre12', state: 'Healthy', listeners: aListeners });
    expect(
      bEnd.changes.some((change) => change.id === b.id),
      'nothing of itself',
    ).toBe(false);
    await aEnd.until('b, Healthy', (changes) => changes.some((change) => change.id === b.id));
    expect(aEnd.last(b.id)).toEqual({ id: b.id, version: 'v2.0.0-pre12', state: 'Healthy', listeners: bListeners });
    aEnd.end.socket.destroy();
    bEnd.end.socket.destroy();
  });

  it('tells its peers Unhealthy when a router disconnects, Removed once it is deleted', async () => {
    const a = await router('edge-routers');
    const b = await router('edge-routers');
    const aEnd = await connected(a);
    const bEnd = await connected(b);
    await aEnd.until('b, Healthy', (changes) => changes.some((change) => change.id === b.id));

    bEnd.end.socket.destroy();
    await aEnd.until('b, Unhealthy', () => aEnd.last(b.id)?.state === 'Unhealthy');
    expect(aEnd.last(b.id)).toEqual({ id: b.id, version: '', state: 'Unhealthy', listeners: [] });

    expect((await call('DELETE', `/edge-routers/${b.id}`)).status).toBe(200);
    await aEnd.until('b, Removed', () => aEnd.last(b.id)?.state === 'Removed');
    aEnd.end.socket.destroy();
  });

  it('tells routers of peers connected to another endpoint process, both ways', async () => {
    const a = await router('edge-routers');
    const c = await router('transit-routers');
    const cListeners = [listenerBytes(13104)];
    const aEnd = await connected(a);

    const cEnd = await connected(c, helloListening(cListeners), second.port);

    // C's endpoint read every router's connection before it told C of them; A's heard of C from the change log.
    await cEnd.until('a, Healthy', (changes) => changes.some((change) => change.id === a.id));
    expect(cEnd.messages[0]).toBe(0);
    await aEnd.until('c, Healthy', () => aEnd.last(c.id)?.state === 'Healthy');
    expect(aEnd.last(c.id)?.listeners).toEqual(cListeners);

    cEnd.end.socket.destroy();
    await aEnd.until('c, Unhealthy', () => aEnd.last(c.id)?.state === 'Unhealthy');
    aEnd.end.socket.destroy();
  });

  it('tells its peers Unhealthy once the lease of a router whose endpoint died runs out', async () => {
    const a = await router('edge-routers');
    const d = await router('edge-routers');
    const aEnd = await connected(a);

    // D's connection as an endpoint that then died wrote it: a lease of a few seconds, never renewed, never ended.
    const connection = { ...routerConnectionOf(d.id, 'dying-connection'), leaseExpiresAt: Date.now() + 3_000 };
    expect(
      await putRouterConnection(
        controller().deps.store,
        'edge-routers',
        connection,
        fingerprintOfCredentials(d.credentials),
      ),
    ).toBe(true);
    await aEnd.until('d, Healthy', () => aEnd.last(d.id)?.state === 'Healthy');

    // Seen within a read of every connection after the lease ran out.
    await aEnd.until('d, Unhealthy', () => aEnd.last(d.id)?.state === 'Unhealthy', 10_000);
    aEnd.end.socket.destroy();
  });
});
