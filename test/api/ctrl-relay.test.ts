import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import { RELAY_ALPN } from '#ctrl-channel/endpoint-relay.ts';
import { links } from '#ctrl-channel/links.ts';
import { ContentType, stringSliceHeader, uint32BytesMapHeader } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerTerminators } from '#ctrl-channel/terminators.ts';
import { localServerNames, serverTls } from '#local/server-tls.ts';
import { readCircuit } from '#shared/store/circuit-items.ts';
import { readEndpointAddress } from '#shared/store/endpoint-items.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, enrolledRouter, type Route } from '../support/ctrl-router.ts';
import { edgeNetwork } from '../support/edge-network.ts';
import { connectedMeshRouter, type MeshRouter, until } from '../support/mesh-router.ts';
import { type SecondEndpoint, startSecondEndpoint } from '../support/second-endpoint.ts';

/**
 * Several endpoint processes (issue 37, goal 6; mesh design step 9): routers connected to different endpoints, as
 * routers reach different ECS tasks through the load balancer. A dial on r1 (held by the test controller's endpoint)
 * to a service hosted on r3 (held by a second endpoint process on the same table) is routed all the same: r3's Route
 * and its result go through the second endpoint's relay, and so does the unroute a fault on r3 causes for r1.
 */
const features = [routerInterfaces, links, routerTerminators, circuits];
const TIMINGS = { heartbeatIntervalMs: 200, unresponsiveTimeoutMs: 2_000, replyTimeoutMs: 600, routeTimeoutMs: 1_500 };
const { controller, call } = useAdminController(
  {},
  { ctrlFeatures: features, ctrlTimings: TIMINGS, ctrlPresenceRefreshMs: 2_000, ctrlRelay: true },
);

const HOST_KEY = Buffer.from('host-public-key');
const DIALER_KEY = Buffer.from('dialer-public-key');

let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;

const connected = (router: { id: string; credentials: Credentials }, port?: number) =>
  connectedMeshRouter(controller(), router, port);

let second: SecondEndpoint;
let r1: MeshRouter;
let r3: MeshRouter;
let r3Credentials: Credentials;
let network: Awaited<ReturnType<typeof edgeNetwork>>;
let link: string;

/** r1 on the test controller's endpoint, r3 on the second; r1 -link-> r3; the service's terminator on r3. */
beforeAll(async () => {
  const { key, cert } = await serverTls(controller().deps, localServerNames({}));
  second = await startSecondEndpoint(controller(), {
    features,
    timings: TIMINGS,
    presenceRefreshMs: 2_000,
    relay: { tls: { key, cert }, host: '127.0.0.1', port: 0 },
  });
  const [e1, e3] = await Promise.all([
    enrolledRouter(controller, call, unique('edge'), 'edge-routers'),
    enrolledRouter(controller, call, unique('edge'), 'edge-routers'),
  ]);
  r3Credentials = e3.credentials;
  r1 = await connected(e1);
  r3 = await connected(e3, second.port);
  network = await edgeNetwork(controller, call, r1.id);
  const terminator = await call('POST', '/terminators', {
    service: network.serviceId,
    router: r3.id,
    binding: 'edge',
    address: 'hosted-on-r3',
  });
  expect(terminator.status).toBe(201);
  link = unique('link');
  r1.reportLink(link, r3.id);
  const graph = controller().ctrl.linkGraph;
  await until(
    () => {
      const known = graph.link(link);
      return known !== undefined && graph.isUsable(known);
    },
    (usable) => usable,
  );
});
afterAll(async () => {
  r1?.end.socket.destroy();
  r3?.end.socket.destroy();
  await second?.close();
});

async function dial(): Promise<void> {
  const session = await network.dialer.session('Dial');
  r1.sendBody(
    ContentType.createCircuitV2Request,
    Buffer.alloc(0),
    new Map([
      [11, Buffer.from(session.token)],
      [14, Buffer.from(network.dialer.apiSessionToken)],
      [12, stringSliceHeader(['0123456789abcdef0123456789abcdef01234567'])],
      [10, uint32BytesMapHeader(new Map([[1003, DIALER_KEY]]))],
    ]),
  );
}

describe('circuits across routers held by different endpoint processes', () => {
  it('registers each endpoint where the others reach it', async () => {
    const address = await readEndpointAddress(controller().deps.store, 'second-endpoint', new Date());
    expect(address).toMatchObject({ host: '127.0.0.1', port: expect.any(Number) });
    expect(address!.port).toBeGreaterThan(0);
  });

  it('routes r1 (here) → r3 (on the second endpoint) through its relay, and a fault on r3 unroutes r1 back through it', async () => {
    await dial();
    const [first, last] = await Promise.all([r1.next(ContentType.route), r3.next(ContentType.route)]);
    const ingress = decodeBody<Route>('ctrl.Route', first.body);
    const egress = decodeBody<Route>('ctrl.Route', last.body);
    expect(egress.circuitId).toBe(ingress.circuitId);
    expect(egress.egress).toMatchObject({ binding: 'edge', destination: 'hosted-on-r3' });
    expect(ingress.forwards[0]).toMatchObject({ dstAddress: link, dstType: 'Link' });
    r1.answerRoute(first, true);
    // r3 answers its own endpoint, which relays the result to the endpoint routing the circuit.
    r3.answerRoute(last, true, [[1003, HOST_KEY]]);
    const response = await r1.next(ContentType.createCircuitV2Response);
    expect(response.headers.get(11)?.toString()).toBe(ingress.circuitId);
    expect(response.headers.get(10)).toBeDefined();

    await controller().ctrl.circuitsStored();
    expect(await readCircuit(controller().deps.store, ingress.circuitId, new Date())).toMatchObject({
      path: [r1.id, r3.id],
      links: [link],
    });

    // The egress router's end reaches its own endpoint, which unroutes both: r3 there, r1 through the relay here.
    r3.sendBody(ContentType.fault, encodeBody('ctrl.Fault', { subject: 'EgressFault', id: ingress.circuitId }));
    const [atR1, atR3] = await Promise.all([r1.next(ContentType.unroute), r3.next(ContentType.unroute)]);
    for (const unroute of [atR1, atR3]) {
      expect(decodeBody<{ circuitId: string }>('ctrl.Unroute', unroute.body).circuitId).toBe(ingress.circuitId);
    }
    expect(await readCircuit(controller().deps.store, ingress.circuitId, new Date())).toBeUndefined();
  });

  it('fails the route, not the endpoint, when the relayed router does not answer in time', async () => {
    await dial();
    const [first] = await Promise.all([r1.next(ContentType.route), r3.next(ContentType.route)]);
    r1.answerRoute(first, true);
    // r3 stays silent: each attempt times out on the second endpoint and is refused here, r1 unrouted.
    const refusal = await r1.next(ContentType.error, 15_000);
    expect(refusal.body.toString()).toMatch(/exceeded maximum \[2\] retries creating circuit/);
    await r1.next(ContentType.unroute);
  });

  it("refuses a relay connection that does not present the controller's own key (a router's certificate)", async () => {
    const { relayPort } = await second.endpoint.ready;
    const socket = connect({
      host: '127.0.0.1',
      port: relayPort!,
      ALPNProtocols: [RELAY_ALPN],
      rejectUnauthorized: false,
      ...r3Credentials,
    });
    const closed = await new Promise<boolean>((resolve) => {
      socket.once('close', () => resolve(true));
      socket.once('error', () => resolve(true));
      setTimeout(() => resolve(false), 5_000);
    });
    expect(closed).toBe(true);
  });
});
