import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import { links } from '#ctrl-channel/links.ts';
import { type ChannelMessage, ContentType, stringSliceHeader, uint32BytesMapHeader } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerTerminators } from '#ctrl-channel/terminators.ts';
import { readCircuit } from '#shared/store/circuit-items.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, enrolledRouter, type Route } from '../support/ctrl-router.ts';
import { edgeNetwork } from '../support/edge-network.ts';
import { connectedMeshRouter, type MeshRouter, until } from '../support/mesh-router.ts';
import { type SecondEndpoint, startSecondEndpoint } from '../support/second-endpoint.ts';

/**
 * Circuits across several routers (issue 37, design step 6): a dial on r1 to a service hosted on r3, through transit
 * r2, over the links the routers reported. Scripted routers on the test controller's endpoint (and one on a second
 * endpoint process), over the real control channel and table.
 */
const features = [routerInterfaces, links, routerTerminators, circuits];
const TIMINGS = { heartbeatIntervalMs: 200, unresponsiveTimeoutMs: 2_000, replyTimeoutMs: 300, routeTimeoutMs: 600 };
const { controller, admin, call } = useAdminController(
  {},
  { ctrlFeatures: features, ctrlTimings: TIMINGS, ctrlPresenceRefreshMs: 2_000 },
);

const HOST_KEY = Buffer.from('host-public-key');
const DIALER_KEY = Buffer.from('dialer-public-key');

let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;

const enrolled = (collection: 'edge-routers' | 'transit-routers') =>
  enrolledRouter(controller, call, unique(collection === 'edge-routers' ? 'edge' : 'transit'), collection);

const connected = (router: { id: string; credentials: Credentials }, port?: number) =>
  connectedMeshRouter(controller(), router, port);

let r1: MeshRouter;
let r2: MeshRouter;
let r3: MeshRouter;
let network: Awaited<ReturnType<typeof edgeNetwork>>;
let l1: string;
let l2: string;
let second: SecondEndpoint | undefined;

/** r1 -l1-> r2 <-l2- r3 (r1 and r3 dial the transit router, as in the reference run), a terminator of the service on r3. */
beforeAll(async () => {
  const [e1, t2, e3] = await Promise.all([
    enrolled('edge-routers'),
    enrolled('transit-routers'),
    enrolled('edge-routers'),
  ]);
  [r1, r2, r3] = [await connected(e1), await connected(t2), await connected(e3)];
  network = await edgeNetwork(controller, call, r1.id);
  const terminator = await call('POST', '/terminators', {
    service: network.serviceId,
    router: r3.id,
    binding: 'edge',
    address: 'hosted-on-r3',
  });
  expect(terminator.status).toBe(201);
  l1 = unique('l1');
  l2 = unique('l2');
  r1.reportLink(l1, r2.id);
  r3.reportLink(l2, r2.id);
  const graph = controller().ctrl.linkGraph;
  await until(
    () => graph.link(l1) && graph.link(l2),
    (both) => both !== undefined,
  );
});
afterAll(async () => {
  await second?.close();
});

async function dial(from: MeshRouter = r1): Promise<{ session: { id: string }; requested: number }> {
  const session = await network.dialer.session('Dial');
  const requested = from.sendBody(
    ContentType.createCircuitV2Request,
    Buffer.alloc(0),
    new Map([
      [11, Buffer.from(session.token)],
      [14, Buffer.from(network.dialer.apiSessionToken)],
      [12, stringSliceHeader(['0123456789abcdef0123456789abcdef01234567'])],
      [10, uint32BytesMapHeader(new Map([[1003, DIALER_KEY]]))],
    ]),
  );
  return { session, requested };
}

/** Each router's Route of one attempt, decoded, with its message to answer. */
async function routes() {
  const messages = await Promise.all([r1, r2, r3].map((router) => router.next(ContentType.route)));
  return messages.map((message) => ({ message, route: decodeBody<Route>('ctrl.Route', message.body) }));
}

/** A circuit dialed on r1 and routed through r2 to r3. */
async function madeCircuit() {
  const { session } = await dial();
  const [first, transit, last] = await routes();
  r1.answerRoute(first!.message, true);
  r2.answerRoute(transit!.message, true);
  r3.answerRoute(last!.message, true, [[1003, HOST_KEY]]);
  const response = await r1.next(ContentType.createCircuitV2Response);
  return { session, response, routes: [first!.route, transit!.route, last!.route] };
}

const unrouteOf = (message: ChannelMessage) =>
  decodeBody<{ circuitId: string; now: boolean }>('ctrl.Unroute', message.body);

describe('circuits across several routers', () => {
  it('routes r1 → r2 → r3: each router its forwards, the egress on r3 alone; stored with its path and links', async () => {
    const { session, response, routes: sent } = await madeCircuit();
    const [ingress, transit, egress] = sent as [Route, Route, Route];
    const { circuitId } = ingress;
    const ingressId = ingress.forwards[0]!.srcAddress;
    const egressId = egress.egress.address;

    for (const route of sent) {
      expect(route).toMatchObject({
        circuitId,
        attempt: 0,
        tags: { serviceId: network.serviceId, clientId: network.dialer.identityId },
      });
      expect(route.timeout).toBeGreaterThan(0);
    }
    expect(ingress.forwards).toEqual([
      { srcAddress: ingressId, dstAddress: l1, dstType: 'Link' },
      { srcAddress: l1, dstAddress: ingressId, dstType: 'Start' },
    ]);
    expect(transit.forwards).toEqual([
      { srcAddress: l1, dstAddress: l2, dstType: 'Link' },
      { srcAddress: l2, dstAddress: l1, dstType: 'Link' },
    ]);
    expect(egress.forwards).toEqual([
      { srcAddress: egressId, dstAddress: l2, dstType: 'Link' },
      { srcAddress: l2, dstAddress: egressId, dstType: 'End' },
    ]);
    expect(ingress.egress).toBeNull();
    expect(transit.egress).toBeNull();
    expect(egress.egress).toMatchObject({
      binding: 'edge',
      destination: 'hosted-on-r3',
      peerData: { 1003: DIALER_KEY },
    });
    expect(new Set([ingressId, egressId, l1, l2]).size).toBe(4);

    expect(response.headers.get(11)?.toString()).toBe(circuitId);
    expect(response.headers.get(12)?.toString()).toBe(ingressId);
    await controller().ctrl.circuitsStored();
    const stored = await readCircuit(controller().deps.store, circuitId, new Date());
    expect(stored).toMatchObject({ path: [r1.id, r2.id, r3.id], links: [l1, l2] });
    const path = await until(
      () => call('GET', `/sessions/${session.id}/route-path`),
      (answer) => answer.body.data?.routePath?.length === 3,
    );
    expect(path.body.data).toEqual({ routePath: [r1.id, r2.id, r3.id] });
    const filter = encodeURIComponent(`id = "${circuitId}"`);
    const listed = await until(
      () => controller().call('GET', `/fabric/v1/circuits?filter=${filter}`, { token: admin() }),
      (answer) => answer.body.data?.length === 1,
    );
    expect(listed.body.data[0]).toMatchObject({
      path: {
        nodes: [{ id: r1.id }, { id: r2.id }, { id: r3.id }],
        links: [{ id: l1 }, { id: l2 }],
      },
    });

    // Its end (r3's egress fault) unroutes it on all three.
    r3.sendBody(ContentType.fault, encodeBody('ctrl.Fault', { subject: 'EgressFault', id: circuitId }));
    for (const router of [r1, r2, r3]) {
      expect(unrouteOf(await router.next(ContentType.unroute))).toEqual({ circuitId, now: false });
    }
  });

  it('fails an attempt on a failure of the transit router, retries with new ids, then unroutes all three', async () => {
    await dial();
    const first = await routes();
    r1.answerRoute(first[0]!.message, true);
    r2.answerRoute(first[1]!.message, false);
    r3.answerRoute(first[2]!.message, true, [[1003, HOST_KEY]]);
    const retried = await routes();
    r1.answerRoute(retried[0]!.message, true);
    r2.answerRoute(retried[1]!.message, false);
    r3.answerRoute(retried[2]!.message, true, [[1003, HOST_KEY]]);
    const refusal = await r1.next(ContentType.error);
    const { circuitId } = first[0]!.route;

    expect(retried.map(({ route }) => route.attempt)).toEqual([1, 1, 1]);
    expect(retried[0]!.route.forwards[0]!.srcAddress).not.toBe(first[0]!.route.forwards[0]!.srcAddress);
    expect(retried[2]!.route.egress.address).not.toBe(first[2]!.route.egress.address);
    expect(refusal.body.toString()).toContain('exceeded maximum [2] retries');
    expect(refusal.body.toString()).toContain('no way on');
    for (const router of [r1, r2, r3]) {
      expect(unrouteOf(await router.next(ContentType.unroute))).toEqual({ circuitId, now: true });
    }
    expect(await readCircuit(controller().deps.store, circuitId, new Date())).toBeUndefined();
  });

  it('ends a circuit when a link it crosses faults: unrouted at once on every router, no longer stored', async () => {
    const { session, routes: sent } = await madeCircuit();
    const { circuitId } = sent[0]!;

    // r2 closes the link r1 dialed: r1 is told, and the circuit over it is ended.
    r2.sendBody(ContentType.fault, encodeBody('ctrl.Fault', { subject: 'LinkFault', id: l1, iteration: 1 }));

    const told = decodeBody<{ subject: string; id: string }>('ctrl.Fault', (await r1.next(ContentType.fault)).body);
    expect(told).toMatchObject({ subject: 'LinkFault', id: l1 });
    for (const router of [r1, r2, r3]) {
      expect(unrouteOf(await router.next(ContentType.unroute))).toEqual({ circuitId, now: true });
    }
    expect(await readCircuit(controller().deps.store, circuitId, new Date())).toBeUndefined();
    const path = await until(
      () => call('GET', `/sessions/${session.id}/route-path`),
      (answer) => answer.body.data?.routePath?.length === 0,
    );
    expect(path.body.data).toEqual({ routePath: [] });

    // No other path: a dial now is refused, routing nothing.
    await dial();
    const refusal = await r1.next(ContentType.error);
    expect(refusal.body.toString()).toMatch(/no path to service .* from router/);
    expect(await r2.none(ContentType.route, 300)).toBe(true);

    // The link dialed again: routed anew.
    l1 = unique('l1');
    r1.reportLink(l1, r2.id);
    await until(
      () => controller().ctrl.linkGraph.link(l1),
      (link) => link !== undefined,
    );
    const again = await madeCircuit();
    expect(again.routes[1]!.forwards[0]).toEqual({ srcAddress: l1, dstAddress: l2, dstType: 'Link' });
    r1.sendBody(
      ContentType.fault,
      encodeBody('ctrl.Fault', { subject: 'IngressFault', id: again.routes[0]!.circuitId }),
    );
    for (const router of [r1, r2, r3]) await router.next(ContentType.unroute);
  });

  it('refuses at once a path through a router held by another endpoint, with the reason, sending no Route', async () => {
    second = await startSecondEndpoint(controller(), { features, presenceRefreshMs: 2_000 });
    const e4 = await enrolled('edge-routers');
    const r4 = await connected(e4, second.port);
    const other = await edgeNetwork(controller, call, r1.id);
    await call('POST', '/terminators', {
      service: other.serviceId,
      router: r4.id,
      binding: 'edge',
      address: 'hosted-on-r4',
    });
    const l4 = unique('l4');
    r4.reportLink(l4, r2.id);
    await until(
      () => {
        const link = controller().ctrl.linkGraph.link(l4);
        return link !== undefined && controller().ctrl.linkGraph.isUsable(link);
      },
      (usable) => usable,
    );

    const session = await other.dialer.session('Dial');
    r1.sendBody(
      ContentType.createCircuitV2Request,
      Buffer.alloc(0),
      new Map([
        [11, Buffer.from(session.token)],
        [14, Buffer.from(other.dialer.apiSessionToken)],
        [10, uint32BytesMapHeader(new Map([[1003, DIALER_KEY]]))],
      ]),
    );
    const refusal = await r1.next(ContentType.error);

    expect(refusal.body.toString()).toContain(
      `router ${r4.id} on its path is connected to another controller endpoint`,
    );
    expect(await r1.none(ContentType.route, 300)).toBe(true);
    expect(await r2.none(ContentType.route, 100)).toBe(true);
    r4.end.socket.destroy();
  });

  it("takes the path a router's cost changed through the management API makes cheapest, its cost kept in memory before", async () => {
    // A second way from r1 to r3, through transit r5: r1 -l5-> r5 <-l6- r3.
    const r5 = await connected(await enrolled('transit-routers'));
    const [l5, l6] = [unique('l5'), unique('l6')];
    r1.reportLink(l5, r5.id);
    r3.reportLink(l6, r5.id);
    const graph = controller().ctrl.linkGraph;
    await until(
      () =>
        [l5, l6].every((id) => {
          const link = graph.link(id);
          return link !== undefined && graph.isUsable(link);
        }),
      (usable) => usable,
    );
    /** The link a dial's circuit leaves r1 by (the circuit made on the three routers of its path, then ended). */
    const firstLink = async () => {
      await dial();
      const first = await r1.next(ContentType.route);
      const { forwards } = decodeBody<Route>('ctrl.Route', first.body);
      const link = forwards.find((forward) => forward.dstType === 'Link')!.dstAddress;
      const transit = link === l5 ? r5 : r2;
      const [middle, last] = [await transit.next(ContentType.route), await r3.next(ContentType.route)];
      r1.answerRoute(first, true);
      transit.answerRoute(middle, true);
      r3.answerRoute(last, true, [[1003, HOST_KEY]]);
      await r1.next(ContentType.createCircuitV2Response);
      const { circuitId } = decodeBody<Route>('ctrl.Route', first.body);
      r1.sendBody(ContentType.fault, encodeBody('ctrl.Fault', { subject: 'IngressFault', id: circuitId }));
      for (const router of [r1, transit, r3]) await router.next(ContentType.unroute);
      return link;
    };
    const costs = async (transitCosts: [MeshRouter, number][]) => {
      for (const [router, cost] of transitCosts) {
        expect((await call('PATCH', `/transit-routers/${router.id}`, { cost })).status).toBe(200);
      }
      await controller().ctrl.changesRead();
    };

    await costs([[r2, 60_000]]);
    const avoidingR2 = await firstLink();
    await costs([
      [r2, 0],
      [r5, 60_000],
    ]);
    const avoidingR5 = await firstLink();

    expect(avoidingR2).toBe(l5);
    expect(avoidingR5).toBe(l1);
    r5.end.socket.destroy();
  });
});
