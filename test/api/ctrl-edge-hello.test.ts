import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { edgeHello } from '#ctrl-channel/edge-hello.ts';
import { ContentType, Header, replyForOf } from '#ctrl-channel/message.ts';
import { decodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { putRouterConnection, readRouterConnections, recordRouterSync } from '#shared/store/router-connections.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  clientHelloBody,
  clientHelloReply,
  dialCtrl,
  enrolledEdgeRouter,
  fingerprintOfCredentials,
  type RouterEnd,
  routerConnectionOf,
  TEST_ROUTER_HOSTNAME,
} from '../support/ctrl-router.ts';
import { edgeNetwork } from '../support/edge-network.ts';

// The controller waits twice the reply timeout for the ClientHello: 5 s here, 10 s by default. Heartbeats as
// the default's, so that a loaded machine does not close a router between two of them.
const TIMINGS = { heartbeatIntervalMs: 1_000, unresponsiveTimeoutMs: 10_000, replyTimeoutMs: 2_500 };
const { controller, call } = useAdminController(
  {},
  // The edge hello alone: its statuses are not moved on by the API session sync that follows it.
  { ctrlTimings: TIMINGS, ctrlFeatures: [routerInterfaces, edgeHello] },
);

const C = '/edge/client/v1';
const ADVERTISED = { tls: `tls://${TEST_ROUTER_HOSTNAME}:3022` };

/** What `GET /edge-routers/{id}` shows of the router's edge hello. */
async function shown(id: string) {
  const { body } = await call('GET', `/edge-routers/${id}`);
  const { isOnline, syncStatus, hostname, supportedProtocols } = body.data;
  return { isOnline, syncStatus, hostname, supportedProtocols };
}

/** Polls until `done` holds, for at most 15 s (the controller records what a router says as it goes). */
async function until(done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await done()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
}

/** The router as shown once its sync status is `syncStatus` (or as it is after waiting for it). */
async function shownOnce(id: string, syncStatus: string) {
  await until(async () => (await shown(id)).syncStatus === syncStatus);
  return shown(id);
}

/** The ServerHello the controller sends a router that does not answer it by itself. */
async function serverHelloOf(end: RouterEnd) {
  let message = await end.next();
  while (message.contentType !== ContentType.serverHello) message = await end.next();
  return message;
}

/** A router connected, that received the ServerHello and has not answered it. */
async function unanswered(router: { id: string; credentials: Credentials }) {
  const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true, answerServerHello: false });
  await end.hello(router.id);
  return { end, serverHello: await serverHelloOf(end) };
}

/** A new edge router, connected, that received the ServerHello and has not answered it. */
async function connectedUnanswered(name: string) {
  const router = await enrolledEdgeRouter(controller, call, name);
  return { router, ...(await unanswered(router)) };
}

describe("the edge hello: the controller's ServerHello and the router's ClientHello", () => {
  it("sends the ServerHello; the router's listeners then show on the router, the client's routers and a Dial session's router", async () => {
    const router = await enrolledEdgeRouter(controller, call, 'eh-router');
    const { serviceId, dialer } = await edgeNetwork(controller, call, router.id);
    const token = dialer.apiSessionToken;
    const { end, serverHello } = await unanswered(router);

    // As the reference's instant sync sends it: the router data model announced in header 1024 and in the data.
    expect(serverHello.headers.get(Header.routerDataModel)).toEqual(Buffer.from([1]));
    expect(decodeBody('edge.ServerHello', serverHello.body)).toMatchObject({
      version: 'v2.0.0',
      data: { instant: 'true', routerModel: 'true' },
    });
    // Written beside the ServerHello, not before it.
    expect(await shownOnce(router.id, 'SYNC_HELLO')).toMatchObject({ isOnline: true, supportedProtocols: {} });
    end.send({ ...clientHelloReply(serverHello), sequence: 10 });

    const answered = await shownOnce(router.id, 'SYNC_IN_PROGRESS');
    const detail = await call('GET', `/edge-routers/${router.id}`);
    const listed = await call('GET', `/edge-routers?filter=${encodeURIComponent(`id = "${router.id}"`)}`);
    const mine = await controller().call('GET', `${C}/current-identity/edge-routers`, { token });
    const ofService = await controller().call('GET', `${C}/services/${serviceId}/edge-routers`, { token });
    const dial = await controller().call('POST', `${C}/sessions`, { token, body: { serviceId, type: 'Dial' } });
    const sessions = await controller().call('GET', `${C}/sessions`, { token });

    const reported = { hostname: TEST_ROUTER_HOSTNAME, supportedProtocols: ADVERTISED };
    const online = { isOnline: true, syncStatus: 'SYNC_IN_PROGRESS', ...reported };
    expect(answered).toEqual(online);
    expectMatchesSpec('management', 'GET', '/edge-routers/{id}', 200, detail.body);
    expect(listed.body.data).toEqual([expect.objectContaining(online)]);
    expect(mine.body.data).toEqual([expect.objectContaining({ id: router.id, ...online })]);
    expect(ofService.body.data.edgeRouters).toEqual([expect.objectContaining(online)]);
    expect(dial.status, dial.text).toBe(201);
    expectMatchesSpec('client', 'POST', '/sessions', 201, dial.body);
    // What SDKs dial: `urls` (older SDKs) and `supportedProtocols`, each `<protocol>://<advertised host>:<port>`.
    expect(dial.body.data.edgeRouters).toEqual([
      expect.objectContaining({ name: 'eh-router', ...online, urls: ADVERTISED }),
    ]);
    expect(sessions.body.data[0].edgeRouters[0]).toMatchObject({ ...online, urls: ADVERTISED });

    end.socket.destroy();
    await until(async () => !(await shown(router.id)).isOnline);
    const afterDial = await controller().call('POST', `${C}/sessions`, { token, body: { serviceId, type: 'Dial' } });
    // An offline router names no address to dial.
    expect(await shown(router.id)).toEqual({
      isOnline: false,
      syncStatus: 'SYNC_DISCONNECTED',
      hostname: '',
      supportedProtocols: {},
    });
    expect(afterDial.body.data.edgeRouters).toEqual([
      expect.objectContaining({ isOnline: false, urls: {}, supportedProtocols: {}, hostname: '' }),
    ]);
  }, 120_000);

  it('reads the listeners of a router older than 0.26.4 from its host name, protocols and ports', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'eh-old-router');
    const end = await dialCtrl(controller(), router.credentials, {
      answerHeartbeats: true,
      clientHello: clientHelloBody({
        hostname: 'old.example',
        protocols: ['tls', 'wss', 'ws'],
        protocolPorts: ['3022', '443'],
        listeners: [],
      }),
    });
    await end.hello(router.id);

    expect(await shownOnce(router.id, 'SYNC_IN_PROGRESS')).toEqual({
      isOnline: true,
      syncStatus: 'SYNC_IN_PROGRESS',
      hostname: 'old.example',
      // `ws` has no port beside it.
      supportedProtocols: { tls: 'tls://old.example:3022', wss: 'wss://old.example:443' },
    });
    expect(end.serverHellos).toHaveLength(1);
    end.socket.destroy();
  });

  it('says SYNC_HELLO_TIMEOUT when no ClientHello comes in time, keeps the channel, and takes the listeners of a late one', async () => {
    const { router, end, serverHello } = await connectedUnanswered('eh-silent-router');

    const timedOut = await shownOnce(router.id, 'SYNC_HELLO_TIMEOUT');
    expect(timedOut).toEqual({
      isOnline: true,
      syncStatus: 'SYNC_HELLO_TIMEOUT',
      hostname: '',
      supportedProtocols: {},
    });
    expect(controller().ctrl.connected(router.id)?.channel.closeReason).toBeUndefined();

    end.send({ ...clientHelloReply(serverHello), sequence: 11 });
    await until(async () => (await shown(router.id)).hostname !== '');
    // The status after a timeout is the features' that follow (they started without the ClientHello).
    expect(await shown(router.id)).toEqual({
      ...timedOut,
      hostname: TEST_ROUTER_HOSTNAME,
      supportedProtocols: ADVERTISED,
    });
    end.socket.destroy();
  });

  it('says SYNC_ERROR for a ClientHello that does not decode, keeps the channel, and reads no second one', async () => {
    const { router, end, serverHello } = await connectedUnanswered('eh-garbled-router');

    // A length-delimited field whose length runs past the body.
    end.send({ ...clientHelloReply(serverHello, Buffer.from([0x12, 0x7f, 0x61])), sequence: 12 });
    const refused = await shownOnce(router.id, 'SYNC_ERROR');
    end.send({ ...clientHelloReply(serverHello), sequence: 13 });
    end.send({ contentType: ContentType.latency, sequence: 14 });
    const probe = await end.next();

    expect(refused).toEqual({ isOnline: true, syncStatus: 'SYNC_ERROR', hostname: '', supportedProtocols: {} });
    // The channel still answers: the latency probe sent after the second ClientHello, which changed nothing.
    expect(replyForOf(probe)).toBe(14);
    expect(await shown(router.id)).toEqual(refused);
    end.socket.destroy();
  });

  const listener = (protocol: string, hostname: string, port: number) => ({
    address: { value: `${protocol}:0.0.0.0:${port}`, protocol, hostname: '0.0.0.0', port },
    advertise: { value: `${hostname}:${port}`, protocol, hostname, port },
  });
  const manyListeners = (count: number) =>
    Array.from({ length: count }, (_, i) => listener(`p${i}`, `r${i}.example`, 1000 + i));

  it("keeps no more of a hostile router's ClientHello than a few listeners of sound names", async () => {
    const listeners = [
      listener('tls', 'h'.repeat(254), 3022),
      listener('TLS://evil', 'evil.example', 3022),
      listener('wss', 'user@evil.example/path', 443),
      listener('ws', 'ok.example', 0),
      ...manyListeners(300),
    ];
    const router = await enrolledEdgeRouter(controller, call, 'eh-hostile-router');
    const end = await dialCtrl(controller(), router.credentials, {
      answerHeartbeats: true,
      clientHello: clientHelloBody({ hostname: `${'x'.repeat(300)}.example`, listeners }),
    });
    await end.hello(router.id);

    const stored = await shownOnce(router.id, 'SYNC_IN_PROGRESS');
    const item = (await readRouterConnections(controller().deps.store, 'edge-routers', [router.id])).get(router.id);

    expect(stored).toMatchObject({ isOnline: true, syncStatus: 'SYNC_IN_PROGRESS', hostname: '' });
    // The first 16 listeners are read: the 4 unsound ones are left out, 12 kept.
    expect(stored.supportedProtocols).toEqual(
      Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`p${i}`, `p${i}://r${i}.example:${1000 + i}`])),
    );
    expect(JSON.stringify(item).length).toBeLessThan(2_000);
    end.socket.destroy();
  });

  it('refuses a ClientHello of more than 64 KiB undecoded: SYNC_ERROR, nothing of it kept', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'eh-huge-router');
    const body = clientHelloBody({ listeners: manyListeners(1_000) });
    expect(body.length).toBeGreaterThan(64 * 1024);
    const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true, clientHello: body });
    await end.hello(router.id);

    expect(await shownOnce(router.id, 'SYNC_ERROR')).toEqual({
      isOnline: true,
      syncStatus: 'SYNC_ERROR',
      hostname: '',
      supportedProtocols: {},
    });
    end.socket.destroy();
  });

  it("never lets a replaced connection's late write overwrite what the router's newer connection recorded", async () => {
    const router = await enrolledEdgeRouter(controller, call, 'eh-replaced-router');
    const { store } = controller().deps;
    const fingerprint = fingerprintOfCredentials(router.credentials);
    await putRouterConnection(store, 'edge-routers', routerConnectionOf(router.id, 'old'), fingerprint);
    await putRouterConnection(store, 'edge-routers', routerConnectionOf(router.id, 'new'), fingerprint);
    const newer = { hostname: 'new.example', supportedProtocols: { tls: 'tls://new.example:3022' } };
    await recordRouterSync(store, 'edge-routers', router.id, 'new', { syncStatus: 'SYNC_DONE', listeners: newer });

    const late = await recordRouterSync(store, 'edge-routers', router.id, 'old', {
      syncStatus: 'SYNC_IN_PROGRESS',
      listeners: { hostname: 'old.example', supportedProtocols: {} },
    });

    expect(late).toBe(false);
    expect(await shown(router.id)).toEqual({ isOnline: true, syncStatus: 'SYNC_DONE', ...newer });
  });

  it('sends the ServerHello without waiting for SYNC_HELLO to be written, which never replaces a later status', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'eh-slow-status-router');
    const { db } = controller().deps.store;
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let held: Promise<unknown> | undefined;
    // DynamoDB slow to write this router's SYNC_HELLO, until the test lets it through.
    db.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as UpdateCommandInput;
        const status = input.ExpressionAttributeValues?.[':status'];
        if (status !== 'SYNC_HELLO' || !String(input.Key?.PK).includes(router.id)) return next(args);
        held = released.then(() => next(args));
        return held as ReturnType<typeof next>;
      },
      { step: 'initialize', name: 'holdSyncHello' },
    );
    try {
      const { end, serverHello } = await unanswered(router);
      expect(held).toBeDefined();

      end.send({ ...clientHelloReply(serverHello), sequence: 10 });
      expect((await shownOnce(router.id, 'SYNC_IN_PROGRESS')).syncStatus).toBe('SYNC_IN_PROGRESS');
      release();

      // The late SYNC_HELLO is refused by its condition: a status is already there.
      await expect(held).rejects.toThrow('The conditional request failed');

      expect((await shown(router.id)).syncStatus).toBe('SYNC_IN_PROGRESS');
      const [connection] = (await readRouterConnections(controller().deps.store, 'edge-routers', [router.id])).values();
      const { store } = controller().deps;
      await recordRouterSync(store, 'edge-routers', router.id, connection!.connectionId, { syncStatus: 'SYNC_DONE' });
      const regressed = await recordRouterSync(store, 'edge-routers', router.id, connection!.connectionId, {
        syncStatus: 'SYNC_HELLO',
      });
      expect(regressed).toBe(false);
      expect((await shown(router.id)).syncStatus).toBe('SYNC_DONE');
      end.socket.destroy();
    } finally {
      release();
      db.middlewareStack.remove('holdSyncHello');
    }
  });
});
