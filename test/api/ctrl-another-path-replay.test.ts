import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import { messageOfRecord } from '#ctrl-channel/frame-recorder.ts';
import { links } from '#ctrl-channel/links.ts';
import { ContentType, Header, int32Header, stringSliceHeader, uint32BytesMapHeader } from '#ctrl-channel/message.ts';
import { decodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerTerminators } from '#ctrl-channel/terminators.ts';
import { useAdminController } from '../support/admin-controller.ts';
import type { Route } from '../support/ctrl-router.ts';
import { edgeNetwork } from '../support/edge-network.ts';
import {
  bodyOf,
  connectedStandIn,
  framesOf,
  listens,
  type RecordedConnection,
  type ReplayedRouter,
  recordedConnections,
  replayLinkReportsBeforeFirstRoute,
} from '../support/replayed-router.ts';

/**
 * The run of four reference routers v2.0.0-pre12 that proved another path (test/data/ctrl-channel/another-path-v2.0.0-pre12/,
 * its README section says how it was made): r1 and r3 edge routers dialing transit routers r2 and r4, r4 at router
 * cost 100; an echo service hosted on r3 by the C SDK's host-proxy, dialed on r1 by ziti-prox-c. The first circuit
 * ran r1 → r2 → r3; r2 was stopped, r1 and r3 faulted their links to it and the circuit was unrouted; the next dial
 * ran r1 → r4 → r3. Trimmed to the fabric's frames before the run's idle part. CI has no router: four routers enrolled
 * here send the recorded hellos and link reports (the link ids as recorded, the transits' ids this test's), and the
 * Routes the controller sends are checked against the recorded ones and answered with the recorded results.
 */
const DIRECTORY = join(import.meta.dirname, '../data/ctrl-channel/another-path-v2.0.0-pre12');

const connections = recordedConnections(DIRECTORY);
type Connection = RecordedConnection;
const routesOf = (connection: Connection) =>
  framesOf(connection, 'out', ContentType.route).map((frame) => ({
    atMs: connection.startMs + frame.atMs,
    route: decodeBody<Route>('ctrl.Route', bodyOf(frame)),
  }));

// The two transits (they listen): r2 carried the first circuit, r4 the second. The dialers: r1 the one whose Route
// carried no egress (the dialing SDK's), r3 the other.
const transits = connections.filter(listens).sort((a, b) => routesOf(a)[0]!.atMs - routesOf(b)[0]!.atMs);
const [r2Recorded, r4Recorded] = transits as [Connection, Connection];
const dialersRecorded = connections.filter((connection) => !listens(connection));
const r1Recorded = dialersRecorded.find((connection) => !routesOf(connection)[0]!.route.egress)!;
const r3Recorded = dialersRecorded.find((connection) => connection !== r1Recorded)!;
const order: [string, Connection, Record<string, unknown>][] = [
  ['r2', r2Recorded, {}],
  ['r4', r4Recorded, { cost: 100 }],
  ['r1', r1Recorded, {}],
  ['r3', r3Recorded, {}],
];

const { controller, call } = useAdminController(
  {},
  { ctrlFeatures: [routerInterfaces, links, routerTerminators, circuits] },
);

const replayed = new Map<Connection, ReplayedRouter>();
const here = (recordedId: string) =>
  [...replayed].find(([connection]) => connection.routerId === recordedId)?.[1].id ?? recordedId;

beforeAll(async () => {
  for (const [name, connection, fields] of order) {
    replayed.set(
      connection,
      await connectedStandIn(controller, call, connection, `replayed-another-path-${name}`, fields),
    );
  }
  // The dialers' link reports before the first circuit, each link's destination the transit enrolled here.
  for (const connection of dialersRecorded)
    replayLinkReportsBeforeFirstRoute(connection, replayed.get(connection)!, here);
});
afterAll(() => {
  for (const router of replayed.values()) router.end.socket.destroy();
});

/** The forwards of a Route, the attempt's own ingress or egress id named alike in both. */
const shape = (route: Route, recorded: Route) => {
  const names = new Map([
    [route.forwards[0]!.srcAddress, 'ingress or egress id'],
    [recorded.forwards[0]!.srcAddress, 'ingress or egress id'],
  ]);
  const named = (each: Route) =>
    each.forwards.map((forward) => ({
      ...forward,
      srcAddress: names.get(forward.srcAddress) ?? forward.srcAddress,
      dstAddress: names.get(forward.dstAddress) ?? forward.dstAddress,
    }));
  return [named(route), named(recorded)];
};

describe('four reference routers: another path once the cheaper transit is gone, replayed', () => {
  it('is what the recording says: r1 → r2 → r3, then r1 → r4 → r3 over other links', () => {
    const [first, second] = routesOf(r1Recorded).map(({ route }) => ({ route })) as [
      { route: Route },
      { route: Route },
    ];
    expect(routesOf(r2Recorded).map(({ route }) => route.circuitId)).toEqual([first.route.circuitId]);
    expect(routesOf(r4Recorded)[0]!.route.circuitId).toBe(second.route.circuitId);
    expect(routesOf(r3Recorded).map(({ route }) => route.circuitId)).toEqual([
      first.route.circuitId,
      second.route.circuitId,
    ]);
    expect(first.route.forwards[0]!.dstAddress).not.toBe(second.route.forwards[0]!.dstAddress);
  });

  it('routes the first dial through r2, ends it when r2 goes, and routes the next through r4', async () => {
    const [r2, r4, r1, r3] = order.map(([, connection]) => replayed.get(connection)!) as [
      ReplayedRouter,
      ReplayedRouter,
      ReplayedRouter,
      ReplayedRouter,
    ];
    const [firstRecorded, secondRecorded] = routesOf(r1Recorded).map(({ route }) => route) as [Route, Route];
    const [r3First, r3Second] = routesOf(r3Recorded).map(({ route }) => route) as [Route, Route];
    const graph = controller().ctrl.linkGraph;
    const linkIds = [...routesOf(r2Recorded), ...routesOf(r4Recorded)].flatMap(({ route }) =>
      route.forwards.map((forward) => forward.srcAddress),
    );
    const deadline = Date.now() + 10_000;
    while (!linkIds.every((id) => graph.link(id)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(linkIds.filter((id) => !graph.link(id))).toEqual([]);
    const network = await edgeNetwork(controller, call, r1.id, { encryptionRequired: false });
    const terminator = await call('POST', '/terminators', {
      service: network.serviceId,
      router: r3.id,
      binding: r3First.egress.binding,
      address: r3First.egress.destination,
    });
    expect(terminator.status).toBe(201);
    const session = await network.dialer.session('Dial');
    const dial = () =>
      r1.send({
        contentType: ContentType.createCircuitV2Request,
        body: Buffer.alloc(0),
        headers: new Map([
          [11, Buffer.from(session.token)],
          [14, Buffer.from(network.dialer.apiSessionToken)],
          [12, stringSliceHeader(['0123456789abcdef0123456789abcdef01234567'])],
          [10, uint32BytesMapHeader(new Map())],
        ]),
      });
    /** The path's routers answer with their recorded RouteResults (each its index-th), bound to this Route. */
    const answer = async (path: [ReplayedRouter, Connection, number][], requested: number) => {
      const messages = await Promise.all(path.map(([router]) => router.next(ContentType.route)));
      const routes = messages.map((message) => decodeBody<Route>('ctrl.Route', message.body));
      for (const [position, [router, connection, index]] of path.entries()) {
        const result = messageOfRecord(framesOf(connection, 'in', ContentType.routeResult)[index]!);
        const headers = new Map(result.headers).set(Header.replyFor, int32Header(messages[position]!.sequence));
        router.send({ ...result, headers, body: Buffer.from(routes[0]!.circuitId) });
      }
      const response = await r1.next(ContentType.createCircuitV2Response);
      expect(Number(response.headers.get(Header.replyFor)?.readInt32LE(0))).toBe(requested);
      return routes as [Route, Route, Route];
    };

    // The first dial: the cheaper transit, r2, as recorded; r4 is sent nothing.
    const [ingress, transit, egress] = await answer(
      [
        [r1, r1Recorded, 0],
        [r2, r2Recorded, 0],
        [r3, r3Recorded, 0],
      ],
      dial(),
    );
    expect(transit.forwards).toEqual(routesOf(r2Recorded)[0]!.route.forwards);
    expect(shape(ingress, firstRecorded)[0]).toEqual(shape(ingress, firstRecorded)[1]);
    expect(shape(egress, r3First)[0]).toEqual(shape(egress, r3First)[1]);
    await controller().ctrl.circuitsStored();
    expect((await call('GET', `/sessions/${session.id}/route-path`)).body.data).toEqual({
      routePath: [r1.id, r2.id, r3.id],
    });
    expect(await r4.none(ContentType.route, 200)).toBe(true);

    // r2 stopped: its channel gone, r1 and r3 fault their links to it (as recorded, before the next dial); the
    // circuit is unrouted on r1 and r3.
    r2.end.socket.destroy();
    const secondAt = routesOf(r1Recorded)[1]!.atMs;
    for (const connection of [r1Recorded, r3Recorded]) {
      for (const frame of framesOf(connection, 'in', ContentType.fault)) {
        const message = messageOfRecord(frame);
        const fault = decodeBody<{ subject: string }>('ctrl.Fault', message.body);
        if (fault.subject === 'LinkFault' && connection.startMs + frame.atMs < secondAt) {
          replayed.get(connection)!.send(message);
        }
      }
    }
    for (const router of [r1, r3]) {
      const unroute = decodeBody<{ circuitId: string }>('ctrl.Unroute', (await router.next(ContentType.unroute)).body);
      expect(unroute.circuitId).toBe(ingress.circuitId);
    }
    expect((await call('GET', `/sessions/${session.id}/route-path`)).body.data).toEqual({ routePath: [] });

    // The next dial: through r4, over the links the run used, avoiding r2.
    const [ingress2, transit2, egress2] = await answer(
      [
        [r1, r1Recorded, 1],
        [r4, r4Recorded, 0],
        [r3, r3Recorded, 1],
      ],
      dial(),
    );
    expect(transit2.forwards).toEqual(routesOf(r4Recorded)[0]!.route.forwards);
    expect(shape(ingress2, secondRecorded)[0]).toEqual(shape(ingress2, secondRecorded)[1]);
    expect(shape(egress2, r3Second)[0]).toEqual(shape(egress2, r3Second)[1]);
    await controller().ctrl.circuitsStored();
    const routePath = (await call('GET', `/sessions/${session.id}/route-path`)).body.data.routePath as string[];
    expect(routePath).toEqual([r1.id, r4.id, r3.id]);
    expect(routePath).not.toContain(r2.id);
  });
});
