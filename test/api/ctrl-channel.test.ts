import { connect } from 'node:tls';
import { beforeAll, describe, expect, it } from 'vitest';
import { ReplyTimeoutError } from '#ctrl-channel/channel.ts';
import { ContentType, Header, int32Header, replyForOf, uint64Header } from '#ctrl-channel/message.ts';
import { putRouterConnection, readRouterConnections } from '#shared/store/router-connections.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  dialCtrl,
  enrolledEdgeRouter,
  fingerprintOfCredentials,
  routerConnectionOf,
  routerHelloHeaders,
} from '../support/ctrl-router.ts';
import { recordSent } from '../support/dynamodb-recorder.ts';
import { enrolledDevice } from '../support/enrolled-device.ts';
import { issue, makeCa } from '../support/pki-fixtures.ts';

// Short heartbeats, so a router that stops answering is seen within the test.
const TIMINGS = { heartbeatIntervalMs: 100, unresponsiveTimeoutMs: 600, replyTimeoutMs: 300 };
const { controller, call } = useAdminController({}, { ctrlTimings: TIMINGS });

let first: { id: string; credentials: Credentials };
let second: { id: string; credentials: Credentials };

beforeAll(async () => {
  first = await enrolledEdgeRouter(controller, call, 'ctrl-router-1');
  second = await enrolledEdgeRouter(controller, call, 'ctrl-router-2');
});

/** The reason text of a refused hello (a failed result replying for the hello), after which the connection closes. */
async function refusal(credentials: Credentials | undefined, claimedId: string): Promise<string> {
  const router = await dialCtrl(controller(), credentials);
  const answer = await router.hello(claimedId);
  expect(answer.contentType).toBe(ContentType.result);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([0]));
  expect(replyForOf(answer)).toBe(-1);
  await router.closed;
  return answer.body.toString();
}

describe("a router's control channel (ALPN ziti-ctrl on the API's address)", () => {
  it('accepts an enrolled router: the hello is answered as the reference answers it; HTTP works beside it as before', async () => {
    const router = await dialCtrl(controller(), first.credentials);

    const answer = await router.hello(first.id);

    expect(router.socket.alpnProtocol).toBe('ziti-ctrl');
    expect(answer.contentType).toBe(ContentType.result);
    expect(answer.sequence).toBe(-1);
    expect(replyForOf(answer)).toBe(-1);
    expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
    expect(answer.headers.get(Header.id)?.toString()).toBe('controller');
    expect(answer.headers.get(Header.connectionId)?.toString()).toBe('router-group-1');
    const [version, ...build] = answer.headers.get(Header.helloVersion)!.toString().split('|');
    expect(build).toHaveLength(4);
    // The router compares it (links keyed the v2 way from 0.30.0, interfaces reported from 1.6.3): a v2 release's.
    expect(version).toMatch(/^v2\.\d+\.\d+$/);
    // Its platform as Go names it (`runtime.GOOS`/`GOARCH`), as the reference reports it: amd64, not Node's x64.
    expect(build.slice(2)).toEqual([process.platform, process.arch === 'x64' ? 'amd64' : process.arch]);
    // A v2 router refuses a controller without bit 6 (legacy sessions as JWTs); bit 5 (grouped) is not offered.
    const capabilities = answer.headers.get(Header.capabilities)!;
    expect(capabilities[capabilities.length - 1]! & 0x40).toBe(0x40);
    expect(capabilities[capabilities.length - 1]! & 0x20).toBe(0);
    // The grouped hello gets what the router's multi-channel needs: the flag, its type back, a group secret.
    expect(answer.headers.get(Header.isGrouped)).toEqual(Buffer.from([1]));
    expect(answer.headers.get(Header.type)?.toString()).toBe('ctrl.default');
    expect(answer.headers.get(Header.groupSecret)?.length).toBe(16);
    expect(answer.headers.has(12)).toBe(false);
    expect(controller().ctrl.connected(first.id)?.versionInfo).toMatchObject({ version: 'v2.0.0-pre12', os: 'linux' });
    expect((await controller().call('GET', '/version')).status).toBe(200);
    router.socket.destroy();
    // An application protocol it speaks neither HTTP nor the channel in is refused in the handshake, as before.
    const h2Only = connect({
      host: '127.0.0.1',
      port: controller().server.port,
      servername: 'localhost',
      ca: controller().rootCertPem,
      ALPNProtocols: ['h2'],
    });
    const error = await new Promise<Error>((resolve) => h2Only.once('error', resolve));
    expect(error.message).toMatch(/no application protocol|NO_APPLICATION_PROTOCOL/i);
  });

  it("answers the router's heartbeats and latency probes, sends its own, and correlates replies by sequence", async () => {
    const router = await dialCtrl(controller(), first.credentials);
    await router.hello(first.id);
    const beat = uint64Header(1_234_567_890n);

    router.send({ contentType: ContentType.heartbeat, sequence: 1, headers: new Map([[Header.heartbeat, beat]]) });
    router.send({
      contentType: ContentType.latency,
      sequence: 2,
      headers: new Map([[128, uint64Header(42n)]]),
    });
    const seen = [await router.next(), await router.next(), await router.next()];

    expect(seen.find((m) => m.headers.has(Header.heartbeatResponse))?.headers.get(Header.heartbeatResponse)).toEqual(
      beat,
    );
    const probeAnswer = seen.find((m) => replyForOf(m) === 2);
    expect(probeAnswer?.contentType).toBe(ContentType.result);
    expect(probeAnswer?.headers.get(128)).toEqual(uint64Header(42n));
    expect(
      seen.some((m) => m.contentType === ContentType.heartbeat && m.headers.get(Header.heartbeat)?.length === 8),
    ).toBe(true);

    const channel = controller().ctrl.connected(first.id)!.channel;
    const asked = channel.request({ contentType: 1099, body: Buffer.from('question') });
    let request = await router.next();
    while (request.contentType !== 1099) request = await router.next();
    router.send({
      contentType: 1098,
      sequence: 3,
      headers: new Map([[Header.replyFor, int32Header(request.sequence)]]),
      body: Buffer.from('answer'),
    });
    expect((await asked).body.toString()).toBe('answer');
    await expect(channel.request({ contentType: 1099 })).rejects.toBeInstanceOf(ReplyTimeoutError);
    router.socket.destroy();
  });

  it("acknowledges a router's network interfaces report (which it retries until answered), keeping none of it", async () => {
    const router = await dialCtrl(controller(), first.credentials, { answerHeartbeats: true });
    await router.hello(first.id);

    router.send({
      contentType: ContentType.updateRouterInterfaces,
      sequence: 7,
      body: Buffer.from('0a0c0a046574683010dc0b1801', 'hex'),
    });
    const answer = await router.next();

    expect(answer.contentType).toBe(ContentType.result);
    expect(replyForOf(answer)).toBe(7);
    expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
    router.socket.destroy();
  });

  it('closes a router that stops answering heartbeats, and forgets it', async () => {
    const router = await dialCtrl(controller(), second.credentials);
    await router.hello(second.id);
    expect(controller().ctrl.connected(second.id)).toBeDefined();

    // The router reads the controller's heartbeats and never answers: twice the timeout at first, then closed.
    await router.closed;

    expect(controller().ctrl.connected(second.id)).toBeUndefined();
  });

  it('refuses a router without a client certificate', async () => {
    expect(await refusal(undefined, first.id)).toMatch(/no client certificate/);
  });

  it("refuses a certificate not issued by the network's CA", async () => {
    const foreign = await issue(await makeCa('Another CA'), first.id);

    expect(await refusal(foreign, first.id)).toMatch(/not issued by this network's CA/);
  });

  it("refuses a certificate of this network that is no router's (an identity's)", async () => {
    const device = await enrolledDevice(controller, call, 'ctrl-not-a-router');

    expect(await refusal(device.credentials, device.id)).toMatch(/not an enrolled router's/);
  });

  it("refuses a router presenting its own certificate under another router's id", async () => {
    expect(await refusal(first.credentials, second.id)).toMatch(/not the id of the router the certificate was issued/);
  });

  it('refuses a disabled router', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'ctrl-disabled');
    expect((await call('PATCH', `/edge-routers/${router.id}`, { disabled: true })).status).toBe(200);

    expect(await refusal(router.credentials, router.id)).toMatch(/disabled/);
  });

  it('refuses a hello without the version header the reference requires', async () => {
    const router = await dialCtrl(controller(), first.credentials);
    const headers = routerHelloHeaders();
    headers.delete(Header.helloVersion);

    const answer = await router.hello(first.id, headers);

    expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([0]));
    expect(answer.body.toString()).toMatch(/version header/);
  });

  it('answers bytes that are no channel message with the versions it speaks, then closes', async () => {
    const router = await dialCtrl(controller(), first.credentials);

    router.socket.write('GET / HTTP/1.1\r\nhost: localhost\r\n\r\n');
    await router.closed;

    expect(Buffer.concat(router.received).toString('hex')).toBe('0306090a0100000002000000');
  });
});

describe("an edge router's online state, from its control channel", () => {
  const status = async (id: string) => {
    const { body } = await call('GET', `/edge-routers/${id}`);
    const { isOnline, syncStatus, version, os, arch } = body.data;
    return { isOnline, syncStatus, version, os, arch };
  };
  const listed = async (id: string) =>
    (await call('GET', `/edge-routers?filter=${encodeURIComponent(`id = "${id}"`)}`)).body.data[0];
  const eventually = async (id: string, isOnline: boolean) => {
    for (let tries = 0; tries < 50 && (await status(id)).isOnline !== isOnline; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return status(id);
  };

  it('stays SYNC_ERROR after a ClientHello it could not read, though the API session sync that follows is sent', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'ctrl-bad-client-hello');
    const end = await dialCtrl(controller(), router.credentials, {
      answerHeartbeats: true,
      clientHello: Buffer.from([0x0a, 0x50]),
    });
    await end.hello(router.id);

    let message = await end.next();
    while (message.contentType !== ContentType.apiSessionAdded) message = await end.next();
    // The sync's own status write follows its last chunk: give it the time a write takes.
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect((await status(router.id)).syncStatus).toBe('SYNC_ERROR');
    end.socket.destroy();
  });

  it('is unknown until the router connects, online with its build while connected, disconnected after', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'ctrl-online');
    const before = await status(router.id);
    const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true });
    await end.hello(router.id);

    // Online from its hello; its sync status moves on with its edge hello (`ctrl-edge-hello.test.ts`), and is done once
    // its API sessions are sent.
    for (let tries = 0; tries < 50 && (await status(router.id)).syncStatus !== 'SYNC_DONE'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const connected = await status(router.id);
    const inList = await listed(router.id);
    end.socket.destroy();
    const after = await eventually(router.id, false);

    expect(before).toEqual({ isOnline: false, syncStatus: 'SYNC_UNKNOWN', version: '', os: '', arch: '' });
    expect(connected).toEqual({
      isOnline: true,
      syncStatus: 'SYNC_DONE',
      version: 'v2.0.0-pre12',
      os: 'linux',
      arch: 'amd64',
    });
    expect(inList).toMatchObject({ isOnline: true, syncStatus: 'SYNC_DONE', version: 'v2.0.0-pre12' });
    expect(after).toEqual({ isOnline: false, syncStatus: 'SYNC_DISCONNECTED', version: '', os: '', arch: '' });
  });

  it('goes offline when the router stops answering heartbeats past the timeout', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'ctrl-silent');
    const end = await dialCtrl(controller(), router.credentials);
    await end.hello(router.id);
    expect((await status(router.id)).isOnline).toBe(true);

    await end.closed;

    expect(await eventually(router.id, false)).toMatchObject({ isOnline: false, syncStatus: 'SYNC_DISCONNECTED' });
  });

  it('is closed out when the router is deleted while connected', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'ctrl-deleted');
    const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true });
    await end.hello(router.id);

    expect((await call('DELETE', `/edge-routers/${router.id}`)).status).toBe(200);

    // Its next answered heartbeat's lease renewal finds the connection gone.
    await end.closed;
    expect(controller().ctrl.connected(router.id)).toBeUndefined();
  });

  it('records no connection for a router deleted between its certificate check and the connection write', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'ctrl-deleted-early');
    expect((await call('DELETE', `/edge-routers/${router.id}`)).status).toBe(200);
    const { store } = controller().deps;

    // What the endpoint writes once the hello is accepted, as if the delete had come just before it.
    expect(
      await putRouterConnection(
        store,
        'edge-routers',
        routerConnectionOf(router.id),
        fingerprintOfCredentials(router.credentials),
      ),
    ).toBe(false);
    expect((await readRouterConnections(store, 'edge-routers', [router.id])).size).toBe(0);
  });

  it('moves its lease on every other answered heartbeat, not on each, and stays online', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'ctrl-renewing');
    const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true });
    await end.hello(router.id);
    const heartbeats = 16;

    const sent = await recordSent(controller().deps.store.db, async () => {
      await new Promise((resolve) => setTimeout(resolve, heartbeats * TIMINGS.heartbeatIntervalMs));
    });
    const renewals = sent.filter(
      ({ command, input }) =>
        command === 'UpdateItemCommand' &&
        (input.Key as { PK: string }).PK.startsWith('CTRL#') &&
        (input.Key as { PK: string }).PK.endsWith(router.id) &&
        // Not the edge hello's sync status writes.
        String(input.UpdateExpression).includes('leaseExpiresAt'),
    );

    expect(renewals.length).toBeGreaterThan(0);
    expect(renewals.length).toBeLessThanOrEqual(heartbeats / 2 + 1);
    expect((await status(router.id)).isOnline).toBe(true);
    end.socket.destroy();
  });

  it('goes offline when its lease runs out, as when the endpoint holding it dies without a word', async () => {
    const router = await enrolledEdgeRouter(controller, call, 'ctrl-orphaned');
    const end = await dialCtrl(controller(), router.credentials);
    await end.hello(router.id);
    expect((await status(router.id)).isOnline).toBe(true);

    // Past the lease (timeout + two heartbeat intervals), with nobody renewing it.
    controller().advanceClock(TIMINGS.unresponsiveTimeoutMs + 2 * TIMINGS.heartbeatIntervalMs + 100);

    expect(await status(router.id)).toMatchObject({ isOnline: false, syncStatus: 'SYNC_DISCONNECTED' });
    end.socket.destroy();
  });
});
