import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import {
  boolHeader,
  type ChannelMessage,
  ContentType,
  Header,
  int32Header,
  replyForOf,
  stringMapOf,
  stringSliceHeader,
  uint32BytesMapHeader,
  uint32BytesMapOf,
  uint32Header,
} from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerTerminators } from '#ctrl-channel/terminators.ts';
import { CIRCUIT_TTL_MS, storedCircuits } from '#shared/store/circuit-items.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { dialCtrl, enrolledEdgeRouter, type Route, type RouterEnd } from '../support/ctrl-router.ts';
import { type EdgeClient, edgeNetwork } from '../support/edge-network.ts';
import { until } from '../support/mesh-router.ts';

// Short heartbeats and a short route timeout, so a router that never answers a Route is given up on within the test.
const TIMINGS = { heartbeatIntervalMs: 200, unresponsiveTimeoutMs: 2_000, replyTimeoutMs: 300, routeTimeoutMs: 400 };
/** The OIDC SDKs' access tokens live a minute here, so a test can outlive one without the session's idle timeout. */
const ACCESS_TOKEN_SECONDS = 60;
const { controller, admin, call } = useAdminController(
  { oidc: { advertise: false, accessTokenSeconds: ACCESS_TOKEN_SECONDS, refreshTokenSeconds: 86_400 } },
  // Terminators and circuits: no edge hello, sync or data model messages between the ones these tests read.
  { ctrlTimings: TIMINGS, ctrlFeatures: [routerInterfaces, routerTerminators, circuits] },
);

const EdgeHeaderPublicKey = 1003;
const DIALER_KEY = Buffer.from('dialer-public-key');
const HOST_KEY = Buffer.from('host-public-key');

let routerId: string;
let router: RouterEnd;
let network: Awaited<ReturnType<typeof edgeNetwork>>;
let sequence = 100;

beforeAll(async () => {
  const enrolled = await enrolledEdgeRouter(controller, call, 'circuit-router');
  routerId = enrolled.id;
  network = await edgeNetwork(controller, call, routerId);
  router = await dialCtrl(controller(), enrolled.credentials, { answerHeartbeats: true });
  await router.hello(routerId);
  for (let tries = 0; tries < 50; tries++) {
    if ((await call('GET', `/edge-routers/${routerId}`)).body.data.isOnline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await hostedTerminator('hosted-address-1');
});

/**
 * The network's host binds the service through the router, as a hosting SDK does: the router asks for the terminator
 * (CreateTerminatorV2Request, with the host's public key as its static peer data) and gets it.
 */
async function hostedTerminator(
  address: string,
  peerData: Record<number, Buffer> = { [EdgeHeaderPublicKey]: HOST_KEY },
): Promise<void> {
  const bind = await network.host.session('Bind');
  const seq = ++sequence;
  router.send({
    contentType: ContentType.createTerminatorV2Request,
    sequence: seq,
    body: encodeBody('edge.CreateTerminatorV2Request', {
      address,
      sessionToken: bind.token,
      apiSessionToken: network.host.apiSessionToken,
      peerData,
    }),
  });
  let answer = await router.next();
  // The edge hello and the data model may speak first: skip to the terminator's answer.
  while (answer.contentType !== ContentType.createTerminatorV2Response) answer = await router.next();
  expect(replyForOf(answer)).toBe(seq);
  expect(decodeBody<{ result: string }>('edge.CreateTerminatorV2Response', answer.body).result).toBe('Success');
}

/** The host unbinds: the router asks for its terminators' removal and gets a successful result. */
async function removeTerminators(...terminatorIds: string[]): Promise<void> {
  const seq = ++sequence;
  router.send({
    contentType: ContentType.removeTerminatorsRequest,
    sequence: seq,
    body: encodeBody('ctrl.RemoveTerminatorsRequest', { terminatorIds }),
  });
  const answer = await next(ContentType.result);
  expect(replyForOf(answer)).toBe(seq);
}

/** The router asks for a circuit as the reference router does (headers only); returns the request's sequence. */
function askCircuit(headers: ReadonlyMap<number, Buffer>): number {
  const seq = ++sequence;
  router.send({ contentType: ContentType.createCircuitV2Request, sequence: seq, headers });
  return seq;
}

/** A Dial's headers: the SDK's session token and its API session credential (a legacy token, or an access token). */
async function dialHeaders(
  session: { token: string },
  peerData = new Map([[1003, DIALER_KEY]]),
  apiSessionToken = network.dialer.apiSessionToken,
): Promise<Map<number, Buffer>> {
  return new Map([
    [11, Buffer.from(session.token)],
    [14, Buffer.from(apiSessionToken)],
    [12, stringSliceHeader(['0123456789abcdef0123456789abcdef01234567'])],
    [13, Buffer.alloc(0)],
    [10, uint32BytesMapHeader(peerData)],
  ]);
}

/** The next message of a type from the controller, skipping others (none is expected; a stray one would show here). */
async function next(contentType: number, timeoutMs = 5_000, end: RouterEnd = router): Promise<ChannelMessage> {
  const message = await end.next(timeoutMs);
  expect(message.contentType).toBe(contentType);
  return message;
}

/** Whether the controller sends a router (by default the circuits') nothing more within a while. */
async function silence(ms = 400, end: RouterEnd = router): Promise<boolean> {
  try {
    await end.next(ms);
    return false;
  } catch {
    return true;
  }
}

function answerRoute(route: ChannelMessage, circuitId: string, attempt: number, headers: [number, Buffer][]) {
  router.send({
    contentType: ContentType.routeResult,
    sequence: ++sequence,
    headers: new Map([[Header.replyFor, int32Header(route.sequence)], [1101, uint32Header(attempt)], ...headers]),
    body: Buffer.from(circuitId),
  });
}

const errorOf = (message: ChannelMessage) => ({
  text: message.body.toString(),
  code: message.headers.get(1014)?.readUInt32LE(0),
  circuitId: message.headers.get(1026)?.toString(),
});

const unrouteOf = (message: ChannelMessage) =>
  decodeBody<{ circuitId: string; now: boolean }>('ctrl.Unroute', message.body);

/** Dials the network's service through a router that sets the route up; returns the circuit and the Dial session. */
async function madeCircuit() {
  const session = await network.dialer.session('Dial');
  const requested = askCircuit(await dialHeaders(session));
  const routeMessage = await next(ContentType.route);
  const route = decodeBody<Route>('ctrl.Route', routeMessage.body);
  answerRoute(routeMessage, route.circuitId, 0, [
    [1102, boolHeader(true)],
    [1003, HOST_KEY],
  ]);
  const response = await next(ContentType.createCircuitV2Response);
  made.push(route.circuitId);
  return { session, requested, routeMessage, route, response };
}

/** A dial with these headers whose Route the router sets up: the Route, once the circuit is answered. */
async function routedDial(headers: ReadonlyMap<number, Buffer>): Promise<Route> {
  askCircuit(headers);
  const routeMessage = await next(ContentType.route);
  const route = decodeBody<Route>('ctrl.Route', routeMessage.body);
  answerRoute(routeMessage, route.circuitId, 0, [
    [1102, boolHeader(true)],
    [1003, HOST_KEY],
  ]);
  await next(ContentType.createCircuitV2Response);
  made.push(route.circuitId);
  return route;
}

/** The circuits a test made: ended after it, so a session's route path shows only the next test's (one session). */
const made: string[] = [];
afterEach(async () => {
  for (const circuitId of made.splice(0)) {
    router.send({
      contentType: ContentType.fault,
      sequence: ++sequence,
      body: encodeBody('ctrl.Fault', { subject: 'IngressFault', id: circuitId }),
    });
  }
  while (!(await silence(300)));
});

/** A circuit as the fabric API lists it (`ziti fabric list circuits`), or undefined when it is not listed. */
async function fabricCircuit(circuitId: string): Promise<Record<string, unknown> | undefined> {
  const filter = encodeURIComponent(`id = "${circuitId}"`);
  const listed = await controller().call('GET', `/fabric/v1/circuits?filter=${filter}`, { token: admin() });
  return listed.body.data[0];
}

describe("circuits: a router's CreateCircuitV2Request for an SDK's Dial", () => {
  it('routes the circuit on the asking router and answers it: ingress address, merged peer data, tags; route-path shows it', async () => {
    const { session, requested, routeMessage, route, response } = await madeCircuit();

    expect(route).toMatchObject({
      attempt: 0,
      egress: { binding: 'edge', destination: 'hosted-address-1', peerData: { 1003: DIALER_KEY } },
      tags: { serviceId: network.serviceId, clientId: network.dialer.identityId, hostId: network.host.identityId },
    });
    expect(route.circuitId).toMatch(/^[0-9a-f-]{36}$/);
    const [toEgress, toIngress] = route.forwards;
    expect(toEgress).toEqual({ srcAddress: expect.any(String), dstAddress: route.egress.address, dstType: 'End' });
    expect(toIngress).toEqual({ srcAddress: route.egress.address, dstAddress: toEgress!.srcAddress, dstType: 'Start' });
    expect(toEgress!.srcAddress).not.toBe(route.egress.address);
    // Nanoseconds left of the route timeout.
    expect(route.timeout).toBeGreaterThan(0);
    expect(route.timeout).toBeLessThanOrEqual(TIMINGS.routeTimeoutMs * 1_000_000);

    expect(replyForOf(response)).toBe(requested);
    expect(response.headers.get(11)?.toString()).toBe(route.circuitId);
    expect(response.headers.get(12)?.toString()).toBe(toEgress!.srcAddress);
    expect(uint32BytesMapOf(response, 10)).toEqual(new Map([[1003, HOST_KEY]]));
    expect(Object.fromEntries(stringMapOf(response, 13))).toEqual(route.tags);
    expect(replyForOf(routeMessage)).toBeUndefined();
    await controller().ctrl.circuitsStored();
    const path = await call('GET', `/sessions/${session.id}/route-path`);
    expect(path.body.data).toEqual({ routePath: [routerId] });
    const listed = await fabricCircuit(route.circuitId);
    expect(listed).toMatchObject({
      id: route.circuitId,
      clientId: session.id,
      service: { id: network.serviceId },
      path: { nodes: [{ id: routerId }], links: [] },
    });
  });

  it('ends the circuit on its first fault (Unroute, not now) and ignores the second side’s; route-path is empty again', async () => {
    const { session, route } = await madeCircuit();
    const fault = (subject: string) =>
      router.send({
        contentType: ContentType.fault,
        sequence: ++sequence,
        body: encodeBody('ctrl.Fault', { subject, id: route.circuitId }),
      });

    fault('IngressFault');
    const unroute = unrouteOf(await next(ContentType.unroute));
    fault('EgressFault');

    expect(unroute).toEqual({ circuitId: route.circuitId, now: false });
    expect(await silence()).toBe(true);
    expect((await call('GET', `/sessions/${session.id}/route-path`)).body.data).toEqual({ routePath: [] });
    expect(await fabricCircuit(route.circuitId)).toBeUndefined();
  });

  it('unroutes at once the circuits a forward fault names, known or not', async () => {
    const { session, route } = await madeCircuit();

    router.send({
      contentType: ContentType.fault,
      sequence: ++sequence,
      body: encodeBody('ctrl.Fault', { subject: 'ForwardFault', id: `${route.circuitId} unknown-circuit` }),
    });
    const unroutes = [unrouteOf(await next(ContentType.unroute)), unrouteOf(await next(ContentType.unroute))];

    expect(unroutes).toEqual([
      { circuitId: route.circuitId, now: true },
      { circuitId: 'unknown-circuit', now: true },
    ]);
    expect((await call('GET', `/sessions/${session.id}/route-path`)).body.data).toEqual({ routePath: [] });
  });

  it('unroutes at once the idle circuits a router confirms that this controller does not know, and keeps its own', async () => {
    const { route } = await madeCircuit();

    router.send({
      contentType: ContentType.circuitConfirmation,
      sequence: ++sequence,
      body: encodeBody('ctrl.CircuitConfirmation', {
        circuitIds: [route.circuitId, 'left-over-circuit'],
        idleTimes: { [route.circuitId]: 61e9, 'left-over-circuit': 61e9 },
      }),
    });

    expect(unrouteOf(await next(ContentType.unroute))).toEqual({ circuitId: 'left-over-circuit', now: true });
    expect(await silence()).toBe(true);
  });
});

describe('circuits refused', () => {
  it('refuses a Bind session with WrongSessionType, routing nothing', async () => {
    const bind = await network.host.session('Bind');
    const requested = askCircuit(
      new Map([
        [11, Buffer.from(bind.token)],
        [14, Buffer.from(network.host.apiSessionToken)],
      ]),
    );

    const refusal = await next(ContentType.error);

    expect(replyForOf(refusal)).toBe(requested);
    expect(errorOf(refusal)).toMatchObject({ code: 4, circuitId: undefined });
  });

  it('refuses a dial without the public key the service requires for end-to-end encryption (its default)', async () => {
    askCircuit(await dialHeaders(await network.dialer.session('Dial'), new Map()));

    expect(errorOf(await next(ContentType.error))).toMatchObject({ code: 11, circuitId: undefined });
  });

  it("unroutes a circuit whose host sent no public key for the service's encryption, refusing it", async () => {
    // A host that bound without a key, and whose dial answer brings none either.
    await removeTerminators('hosted-address-1');
    await hostedTerminator('keyless-address', {});
    try {
      askCircuit(await dialHeaders(await network.dialer.session('Dial')));
      const routeMessage = await next(ContentType.route);
      const { circuitId } = decodeBody<Route>('ctrl.Route', routeMessage.body);
      answerRoute(routeMessage, circuitId, 0, [[1102, boolHeader(true)]]);

      expect(unrouteOf(await next(ContentType.unroute))).toEqual({ circuitId, now: true });
      expect(errorOf(await next(ContentType.error))).toMatchObject({ code: 11, circuitId });
    } finally {
      await removeTerminators('keyless-address');
      await hostedTerminator('hosted-address-1');
    }
  });

  it('retries a failed route once with new addresses, then unroutes and refuses with the route error', async () => {
    const session = await network.dialer.session('Dial');
    askCircuit(await dialHeaders(session));

    const first = await next(ContentType.route);
    const firstRoute = decodeBody<Route>('ctrl.Route', first.body);
    answerRoute(first, firstRoute.circuitId, 0, [
      [1103, Buffer.from('dial timed out')],
      [1104, Buffer.from([3])],
    ]);
    const second = await next(ContentType.route);
    const secondRoute = decodeBody<Route>('ctrl.Route', second.body);
    answerRoute(second, secondRoute.circuitId, 1, [
      [1103, Buffer.from('dial timed out again')],
      [1104, Buffer.from([3])],
    ]);
    const unroute = unrouteOf(await next(ContentType.unroute));
    const refusal = errorOf(await next(ContentType.error));

    expect(secondRoute).toMatchObject({ circuitId: firstRoute.circuitId, attempt: 1 });
    expect(secondRoute.egress.address).not.toBe(firstRoute.egress.address);
    expect(secondRoute.forwards[0]!.srcAddress).not.toBe(firstRoute.forwards[0]!.srcAddress);
    expect(unroute).toEqual({ circuitId: firstRoute.circuitId, now: true });
    expect(refusal).toEqual({
      code: 1,
      circuitId: firstRoute.circuitId,
      text: expect.stringContaining('dial timed out again'),
    });
    expect((await call('GET', `/sessions/${session.id}/route-path`)).body.data).toEqual({ routePath: [] });
  });

  it('takes a route result whose success header says false for a failure, as the reference reads the boolean', async () => {
    askCircuit(await dialHeaders(await network.dialer.session('Dial')));
    for (const attempt of [0, 1]) {
      const routeMessage = await next(ContentType.route);
      const { circuitId } = decodeBody<Route>('ctrl.Route', routeMessage.body);
      answerRoute(routeMessage, circuitId, attempt, [[1102, boolHeader(false)]]);
    }

    expect(unrouteOf(await next(ContentType.unroute)).now).toBe(true);
    expect(errorOf(await next(ContentType.error)).code).toBe(1);
  });

  it('refuses a service without terminators on the router; deletes one its router says is invalid, then finds none', async () => {
    const own = await edgeNetwork(controller, call, routerId);
    const session = await own.dialer.session('Dial');
    const headers = new Map([
      [11, Buffer.from(session.token)],
      [14, Buffer.from(own.dialer.apiSessionToken)],
      [10, uint32BytesMapHeader(new Map([[1003, DIALER_KEY]]))],
    ]);

    askCircuit(headers);
    const none = errorOf(await next(ContentType.error));
    const created = await call('POST', '/terminators', {
      service: own.serviceId,
      router: routerId,
      binding: 'edge',
      address: 'gone-address',
    });
    // The endpoint keeps the service's terminators (none) in memory until the create's notice drops them.
    await controller().ctrl.changesRead();
    askCircuit(headers);
    const routeMessage = await next(ContentType.route);
    const route = decodeBody<Route>('ctrl.Route', routeMessage.body);
    answerRoute(routeMessage, route.circuitId, 0, [
      [1103, Buffer.from('invalid terminator')],
      [1104, Buffer.from([1])],
    ]);
    const unroute = unrouteOf(await next(ContentType.unroute));
    const refusal = errorOf(await next(ContentType.error));

    expect(none).toMatchObject({ code: 1, text: expect.stringMatching(/no terminators/) });
    expect(none.circuitId).toMatch(/^[0-9a-f-]{36}$/);
    expect(route.egress.destination).toBe('gone-address');
    expect(unroute).toEqual({ circuitId: route.circuitId, now: true });
    expect(refusal).toMatchObject({
      code: 1,
      circuitId: route.circuitId,
      text: expect.stringMatching(/no terminators/),
    });
    expect((await call('GET', `/terminators/${created.body.data.id}`)).status).toBe(404);
  });

  it('ends a dial naming a hosting instance (13) at its terminator, however the others rank; refuses an instance with none; a plain dial only at a terminator of no instance', async () => {
    const own = await edgeNetwork(controller, call, routerId);
    const terminator = (address: string, instanceId: string, precedence: string) =>
      call('POST', '/terminators', {
        service: own.serviceId,
        router: routerId,
        binding: 'edge',
        address,
        identity: instanceId,
        precedence,
      });
    await terminator('best-address', 'web-1', 'required');
    await terminator('named-address', 'web-2', 'failed');
    const session = await own.dialer.session('Dial');
    const headers = (instanceId: string) =>
      new Map([
        [11, Buffer.from(session.token)],
        [14, Buffer.from(own.dialer.apiSessionToken)],
        [13, Buffer.from(instanceId)],
        [10, uint32BytesMapHeader(new Map([[1003, DIALER_KEY]]))],
      ]);

    const route = await routedDial(headers('web-2'));
    askCircuit(headers('web-3'));
    const refusal = errorOf(await next(ContentType.error));
    // Naming no instance: only a terminator bound without one, as the reference's selectPath (none here).
    askCircuit(headers(''));
    const unnamed = errorOf(await next(ContentType.error));
    await terminator('anonymous-address', '', 'failed');
    await controller().ctrl.changesRead();
    const anonymous = await routedDial(headers(''));

    expect(route.egress.destination).toBe('named-address');
    expect(refusal).toMatchObject({ code: 1, text: expect.stringContaining('no terminators for instance web-3') });
    expect(unnamed).toMatchObject({ code: 1, text: expect.stringMatching(/no terminators/) });
    // The best-ranked terminators (web-1 required) are an instance's: a plain dial passes them over.
    expect(anonymous.egress.destination).toBe('anonymous-address');
  });

  it('gives a route that gets no result up after the route timeout, twice, and unroutes what answers late', async () => {
    const started = Date.now();
    askCircuit(await dialHeaders(await network.dialer.session('Dial')));

    const first = await next(ContentType.route);
    const second = await next(ContentType.route);
    const unroute = unrouteOf(await next(ContentType.unroute));
    const refusal = errorOf(await next(ContentType.error));
    const circuitId = decodeBody<Route>('ctrl.Route', first.body).circuitId;
    answerRoute(first, circuitId, 0, [[1102, boolHeader(true)]]);
    const late = unrouteOf(await next(ContentType.unroute));

    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * TIMINGS.routeTimeoutMs);
    expect(decodeBody<Route>('ctrl.Route', second.body)).toMatchObject({ circuitId, attempt: 1 });
    expect(unroute).toEqual({ circuitId, now: true });
    expect(refusal).toEqual({ code: 1, circuitId, text: expect.stringContaining('timeout creating routes') });
    expect(late).toEqual({ circuitId, now: true });
  });

  it('refuses malformed headers (hostile counts and lengths, no session token), drops malformed faults, and keeps serving', async () => {
    const session = await network.dialer.session('Dial');
    const hostileCount = Buffer.alloc(8);
    hostileCount.writeUInt32LE(0xffff_ffff, 0);
    const hostileLength = Buffer.concat([uint32Header(1), uint32Header(1003), uint32Header(0x7fff_ffff), DIALER_KEY]);
    const headersWith = async (key: number, value: Buffer) => new Map([...(await dialHeaders(session)), [key, value]]);

    for (const headers of [
      await headersWith(12, hostileCount),
      await headersWith(10, hostileLength),
      await headersWith(10, Buffer.from([1, 0])),
      new Map([[14, Buffer.from(network.dialer.apiSessionToken)]]),
    ]) {
      const requested = askCircuit(headers);
      const refusal = await next(ContentType.error);
      expect(replyForOf(refusal)).toBe(requested);
      expect(errorOf(refusal)).toMatchObject({ code: 1, text: expect.stringMatching(/malformed header/) });
    }
    // Fire-and-forget messages with bodies that are no protobuf: logged and dropped.
    for (const contentType of [ContentType.fault, ContentType.circuitConfirmation]) {
      router.send({ contentType, sequence: ++sequence, body: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]) });
    }
    expect(await silence()).toBe(true);
    expect((await madeCircuit()).response.contentType).toBe(ContentType.createCircuitV2Response);
  });
});

describe("circuits: a router not on a circuit's path changes nothing of it", () => {
  // Another enrolled router, connected: the one whose certificate and key an attacker holds, say.
  let intruder: RouterEnd;
  beforeAll(async () => {
    const enrolled = await enrolledEdgeRouter(controller, call, 'circuit-intruder');
    intruder = await dialCtrl(controller(), enrolled.credentials, { answerHeartbeats: true });
    await intruder.hello(enrolled.id);
  });

  const intruderSends = (contentType: number, body: Buffer, headers = new Map<number, Buffer>()) =>
    intruder.send({ contentType, sequence: ++sequence, headers, body });
  const byCircuitId = (a: { circuitId: string }, b: { circuitId: string }) => a.circuitId.localeCompare(b.circuitId);

  it('neither ends nor unroutes a circuit by its faults; its forward faults unroute the named circuits on itself only', async () => {
    const { session, route } = await madeCircuit();
    const { circuitId } = route;
    const fault = (subject: string, id: string) =>
      intruderSends(ContentType.fault, encodeBody('ctrl.Fault', { subject, id }));

    fault('IngressFault', circuitId);
    fault('EgressFault', circuitId);
    fault('ForwardFault', `${circuitId} unknown-circuit`);
    fault('UnknownOwnerForwardFault', circuitId);
    const ownUnroutes = [];
    for (let i = 0; i < 3; i++) ownUnroutes.push(unrouteOf(await next(ContentType.unroute, 5_000, intruder)));

    // What the intruder hears is what it hears of an id nobody knows: its own forwarding entries are dropped.
    expect(ownUnroutes.sort(byCircuitId)).toEqual(
      [
        { circuitId, now: true },
        { circuitId, now: true },
        { circuitId: 'unknown-circuit', now: true },
      ].sort(byCircuitId),
    );
    expect(await silence(400, intruder)).toBe(true);
    expect(await silence()).toBe(true);
    expect((await call('GET', `/sessions/${session.id}/route-path`)).body.data).toEqual({ routePath: [routerId] });
    // Still its own router's to end.
    router.send({
      contentType: ContentType.fault,
      sequence: ++sequence,
      body: encodeBody('ctrl.Fault', { subject: 'IngressFault', id: circuitId }),
    });
    expect(unrouteOf(await next(ContentType.unroute))).toEqual({ circuitId, now: false });
  });

  it('cannot answer a route awaited from another router: its result unroutes on itself, the awaited one decides', async () => {
    askCircuit(await dialHeaders(await network.dialer.session('Dial')));
    const first = await next(ContentType.route);
    const { circuitId } = decodeBody<Route>('ctrl.Route', first.body);

    // The intruder answers first, with success and a key of its own, as if the Route had been sent to it.
    intruderSends(
      ContentType.routeResult,
      Buffer.from(circuitId),
      new Map([
        [Header.replyFor, int32Header(first.sequence)],
        [1101, uint32Header(0)],
        [1102, boolHeader(true)],
        [EdgeHeaderPublicKey, Buffer.from('intruder-key')],
      ]),
    );
    const ownUnroute = unrouteOf(await next(ContentType.unroute, 5_000, intruder));
    answerRoute(first, circuitId, 0, [
      [1103, Buffer.from('dial refused')],
      [1104, Buffer.from([3])],
    ]);
    const second = await next(ContentType.route);
    answerRoute(second, circuitId, 1, [
      [1102, boolHeader(true)],
      [EdgeHeaderPublicKey, HOST_KEY],
    ]);
    const response = await next(ContentType.createCircuitV2Response);
    made.push(circuitId);

    expect(ownUnroute).toEqual({ circuitId, now: true });
    expect(decodeBody<Route>('ctrl.Route', second.body).attempt).toBe(1);
    expect(uint32BytesMapOf(response, 10)).toEqual(new Map([[EdgeHeaderPublicKey, HOST_KEY]]));
    expect(await silence(400, intruder)).toBe(true);
  });

  it("moves no circuit's expiry by its confirmation, which unroutes the circuit on itself only", async () => {
    const { route } = await madeCircuit();
    const { circuitId } = route;
    await controller().ctrl.circuitsStored();
    const expiry = async () =>
      (await storedCircuits(controller().deps.store, [circuitId], controller().deps.now())).get(circuitId)?.expiresAtMs;
    const confirmation = encodeBody('ctrl.CircuitConfirmation', {
      circuitIds: [circuitId],
      idleTimes: { [circuitId]: 61e9 },
    });
    const madeExpiry = await expiry();
    // Past half of the circuit's TTL, when a confirmation from its own router moves its expiry on.
    const later = CIRCUIT_TTL_MS / 2 + 60_000;
    controller().advanceClock(later);
    try {
      intruderSends(ContentType.circuitConfirmation, confirmation);
      const ownUnroute = unrouteOf(await next(ContentType.unroute, 5_000, intruder));
      const expiryAfterIntruder = await expiry();
      router.send({ contentType: ContentType.circuitConfirmation, sequence: ++sequence, body: confirmation });

      expect(ownUnroute).toEqual({ circuitId, now: true });
      expect(expiryAfterIntruder).toBe(madeExpiry);
      expect(await silence()).toBe(true);
      expect(await expiry()).toBeGreaterThan(madeExpiry!);
    } finally {
      controller().advanceClock(-later);
    }
  });
});

describe('circuits for an SDK logged in through the OIDC provider', () => {
  // Made before the tests, as the file's legacy clients are: a dial right after its identity is created can race the
  // index its edge router policies are read from (an identity's role membership), which this file does not test.
  let dialers: EdgeClient[] = [];
  beforeAll(async () => {
    dialers = [];
    for (let i = 0; i < 3; i++) dialers.push(await network.client('dialers', 'oidc'));
  });

  /** A dial as the router asks it for an OIDC SDK: the SDK's access token where a legacy SDK's session token goes. */
  const oidcDialHeaders = (session: { token: string }, accessToken: string) =>
    dialHeaders(session, undefined, accessToken);

  it('routes the dial of an access token, and refuses the next one once its identity is disabled', async () => {
    const dialer = dialers[0]!;
    const session = await dialer.session('Dial');

    const route = await routedDial(await oidcDialHeaders(session, dialer.apiSessionToken));
    expect(route.tags).toMatchObject({ clientId: dialer.identityId, serviceId: network.serviceId });

    const disabled = await call('POST', `/identities/${dialer.identityId}/disable`, { durationMinutes: 0 });
    expect(disabled.status).toBe(200);
    // The endpoint's kept check learns of the disable from the change log within a second or two.
    const refusedDial = async () => {
      const requested = askCircuit(await oidcDialHeaders(session, dialer.apiSessionToken));
      const answer = await router.next(5_000);
      if (answer.contentType === ContentType.route) {
        const routed = decodeBody<Route>('ctrl.Route', answer.body);
        answerRoute(answer, routed.circuitId, 0, [
          [1102, boolHeader(true)],
          [1003, HOST_KEY],
        ]);
        await next(ContentType.createCircuitV2Response);
        made.push(routed.circuitId);
        return false;
      }
      return answer.contentType === ContentType.error && replyForOf(answer) === requested;
    };
    expect(await until(refusedDial, (refused) => refused, 10_000)).toBe(true);
  });

  it('refuses the dial of an access token past its exp, whose check the endpoint kept', async () => {
    const dialer = dialers[1]!;
    const session = await dialer.session('Dial');
    await routedDial(await oidcDialHeaders(session, dialer.apiSessionToken));

    // Past its exp and the minute of clock skew a verification allows.
    const late = (ACCESS_TOKEN_SECONDS + 61) * 1000;
    controller().advanceClock(late);
    try {
      const requested = askCircuit(await oidcDialHeaders(session, dialer.apiSessionToken));
      const refusal = await next(ContentType.error);
      expect(replyForOf(refusal)).toBe(requested);
      expect(errorOf(refusal)).toMatchObject({ code: 2, circuitId: undefined });
    } finally {
      controller().advanceClock(-late);
    }
  });

  it('refuses an access token that does not verify, routing nothing', async () => {
    const dialer = dialers[2]!;
    const session = await dialer.session('Dial');
    const [header, claims] = dialer.apiSessionToken.split('.');

    askCircuit(await oidcDialHeaders(session, `${header}.${claims}.${'A'.repeat(86)}`));

    expect(errorOf(await next(ContentType.error)).circuitId).toBeUndefined();
  });
});
