import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import { messageOfRecord } from '#ctrl-channel/frame-recorder.ts';
import { links } from '#ctrl-channel/links.ts';
import { ContentType, Header, int32Header, stringSliceHeader, uint32BytesMapHeader } from '#ctrl-channel/message.ts';
import { decodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerTerminators } from '#ctrl-channel/terminators.ts';
import { localServerNames, serverTls } from '#local/server-tls.ts';
import { useAdminController } from '../support/admin-controller.ts';
import type { Route } from '../support/ctrl-router.ts';
import { edgeNetwork } from '../support/edge-network.ts';
import {
  bodyOf,
  connectedStandIn,
  framesOf,
  type RecordedConnection,
  type ReplayedRouter,
  recordedConnections,
  replayLinkReportsBeforeFirstRoute,
} from '../support/replayed-router.ts';
import { type SecondEndpoint, startSecondEndpoint } from '../support/second-endpoint.ts';

/**
 * The multi-hop run of three reference routers v2.0.0-pre12 (test/data/ctrl-channel/multihop-v2.0.0-pre12/, its
 * README section says how it was made): r1 and r3 edge routers dialing transit r2, an echo service hosted on r3 by the
 * C SDK's host-proxy, dialed on r1 by ziti-prox-c; the circuit r1 → r2 → r3 made, then r2 stopped. Trimmed to the
 * fabric's frames (hellos, link reports, routes and their results, faults, unroutes). CI has no router: three routers
 * enrolled here send the recorded hellos and link reports (the link ids as recorded, r2's id this test's), a dial on
 * r1 is asked for (the SDK's session is this test's: the recorded one is not kept), and the Routes the controller
 * sends each router are checked against the recorded ones (the forwards, the egress) and answered with the recorded
 * results; then r3's recorded LinkFault ends the circuit on every router, as it did in the run.
 */
const MULTIHOP = join(import.meta.dirname, '../data/ctrl-channel/multihop-v2.0.0-pre12');
/**
 * The same circuit with r3 connected to a second endpoint process (`npm start` with `CONTROLLER_EXTRA_CTRL_PORT`, as a
 * second ECS task): r3's Route and its result went through the endpoints' relay. Replayed the same way, r3's stand-in
 * connected to a second endpoint here.
 */
const RELAYED = join(import.meta.dirname, '../data/ctrl-channel/relay-v2.0.0-pre12');

const features = [routerInterfaces, links, routerTerminators, circuits];
const { controller, call } = useAdminController({}, { ctrlFeatures: features, ctrlRelay: true });

type Connection = RecordedConnection;

/** The recording's three routers, each the first connection of its router, in their places on the circuit's path. */
function recordedPathOf(directory: string) {
  const connections = recordedConnections(directory);
  // The first connection of each router: r2 (listening for links), then the dialers in the order they connected.
  const [r2Recorded, ...dialersRecorded] = connections.filter(
    (connection, index) => connections.findIndex((other) => other.routerId === connection.routerId) === index,
  );
  const r1Recorded = dialersRecorded.find((connection) => !firstRoute(connection).egress)!;
  const r3Recorded = dialersRecorded.find((connection) => connection !== r1Recorded)!;
  return {
    dialersRecorded,
    r1Recorded,
    r2Recorded: r2Recorded!,
    r3Recorded,
    path: [r1Recorded, r2Recorded!, r3Recorded],
  };
}

/** The recorded dialer whose Route carried no egress and forwarded from a fresh id first: the dialing SDK's, r1. */
const firstRoute = (connection: Connection) =>
  decodeBody<Route>('ctrl.Route', bodyOf(framesOf(connection, 'out', ContentType.route)[0]!));

replayedCircuit('three reference routers: a recorded circuit r1 → r2 → r3, replayed', MULTIHOP, 'multihop');
replayedCircuit(
  'three reference routers on two endpoint processes: a recorded circuit r1 → r2 → r3 (r3 on the second), replayed',
  RELAYED,
  'relayed',
);

function replayedCircuit(title: string, directory: string, kind: 'multihop' | 'relayed'): void {
  describe(title, () => {
    const { dialersRecorded, r1Recorded, r3Recorded, path: recordedPath } = recordedPathOf(directory);
    const replayed = new Map<Connection, ReplayedRouter>();
    const here = (recordedId: string) =>
      [...replayed].find(([connection]) => connection.routerId === recordedId)?.[1].id ?? recordedId;
    let second: SecondEndpoint | undefined;

    beforeAll(async () => {
      if (kind === 'relayed') {
        const { key, cert } = await serverTls(controller().deps, localServerNames({}));
        second = await startSecondEndpoint(controller(), {
          features,
          relay: { tls: { key, cert }, host: '127.0.0.1', port: 0 },
        });
      }
      for (const [index, connection] of recordedPath.entries()) {
        const port = connection === r3Recorded ? second?.port : undefined;
        replayed.set(
          connection,
          await connectedStandIn(controller, call, connection, `replayed-${kind}-r${index + 1}`, {}, port),
        );
      }
      // The dialers' link reports before the circuit (those after r2's restart are of a later iteration), each link's
      // destination the r2 enrolled here.
      for (const connection of dialersRecorded)
        replayLinkReportsBeforeFirstRoute(connection, replayed.get(connection)!, here);
    });
    afterAll(async () => {
      for (const router of replayed.values()) router.end.socket.destroy();
      await second?.close();
    });

    it('is what the recording says: one route per router, the egress on r3, the links between them', () => {
      const [ingress, transit, egress] = recordedPath.map(firstRoute) as [Route, Route, Route];
      expect(new Set([ingress.circuitId, transit.circuitId, egress.circuitId]).size).toBe(1);
      expect(ingress.forwards[0]!.dstType).toBe('Link');
      expect(transit.forwards.map((forward) => forward.dstType)).toEqual(['Link', 'Link']);
      expect(egress.egress).toMatchObject({ binding: 'edge' });
    });

    it('routes the dial as it was routed, takes the routers’ recorded results, and ends it on the recorded link fault', async () => {
      const [ingressRecorded, transitRecorded, egressRecorded] = recordedPath.map(firstRoute) as [Route, Route, Route];
      const [r1, r2, r3] = recordedPath.map((connection) => replayed.get(connection)!) as [
        ReplayedRouter,
        ReplayedRouter,
        ReplayedRouter,
      ];
      const graph = controller().ctrl.linkGraph;
      const linkIds = transitRecorded.forwards.map((forward) => forward.srcAddress);
      const deadline = Date.now() + 10_000;
      while (!linkIds.every((id) => graph.link(id)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const network = await edgeNetwork(controller, call, r1.id, { encryptionRequired: false });
      const terminator = await call('POST', '/terminators', {
        service: network.serviceId,
        router: r3.id,
        binding: egressRecorded.egress.binding,
        address: egressRecorded.egress.destination,
      });
      expect(terminator.status).toBe(201);

      const session = await network.dialer.session('Dial');
      const requested = r1.send({
        contentType: ContentType.createCircuitV2Request,
        body: Buffer.alloc(0),
        headers: new Map([
          [11, Buffer.from(session.token)],
          [14, Buffer.from(network.dialer.apiSessionToken)],
          [12, stringSliceHeader(['0123456789abcdef0123456789abcdef01234567'])],
          [10, uint32BytesMapHeader(new Map())],
        ]),
      });
      const routeMessages = await Promise.all([r1, r2, r3].map((router) => router.next(ContentType.route)));
      const [ingress, transit, egress] = routeMessages.map((message) =>
        decodeBody<Route>('ctrl.Route', message.body),
      ) as [Route, Route, Route];

      // The same forwards as recorded, the attempt's own ingress and egress ids in place of the recorded ones.
      const ids = (route: Route, recorded: Route) =>
        new Map([
          [route.forwards[0]!.srcAddress, 'ingress or egress id'],
          [recorded.forwards[0]!.srcAddress, 'ingress or egress id'],
        ]);
      const shape = (route: Route, names: Map<string, string>) =>
        route.forwards.map((forward) => ({
          ...forward,
          srcAddress: names.get(forward.srcAddress) ?? forward.srcAddress,
          dstAddress: names.get(forward.dstAddress) ?? forward.dstAddress,
        }));
      expect(shape(ingress, ids(ingress, ingressRecorded))).toEqual(
        shape(ingressRecorded, ids(ingress, ingressRecorded)),
      );
      expect(transit.forwards).toEqual(transitRecorded.forwards);
      expect(shape(egress, ids(egress, egressRecorded))).toEqual(shape(egressRecorded, ids(egress, egressRecorded)));
      expect(ingress.egress).toBeNull();
      expect(transit.egress).toBeNull();
      expect(egress.egress).toMatchObject({
        binding: egressRecorded.egress.binding,
        destination: egressRecorded.egress.destination,
        address: egress.forwards[0]!.srcAddress,
      });
      expect(Object.keys(egress.tags).sort()).toEqual(Object.keys(egressRecorded.tags).sort());

      // Each router answers with its recorded RouteResult, bound to this circuit and Route.
      for (const [index, connection] of recordedPath.entries()) {
        const result = messageOfRecord(framesOf(connection, 'in', ContentType.routeResult)[0]!);
        const headers = new Map(result.headers).set(Header.replyFor, int32Header(routeMessages[index]!.sequence));
        replayed.get(connection)!.send({ ...result, headers, body: Buffer.from(ingress.circuitId) });
      }
      const response = await r1.next(ContentType.createCircuitV2Response);
      expect(Number(response.headers.get(Header.replyFor)?.readInt32LE(0))).toBe(requested);
      expect(response.headers.get(12)?.toString()).toBe(ingress.forwards[0]!.srcAddress);
      await controller().ctrl.circuitsStored();
      const routePath = await call('GET', `/sessions/${session.id}/route-path`);
      expect(routePath.body.data).toEqual({ routePath: [r1.id, r2.id, r3.id] });

      // r2 stopped: r3 faulted its link (as recorded), and the controller unrouted the circuit at once on r1 and r3
      // (r2, gone in the run, is still connected here and is unrouted too).
      const linkFault = framesOf(r3Recorded, 'in', ContentType.fault)
        .map(messageOfRecord)
        .find((message) => decodeBody<{ subject: string }>('ctrl.Fault', message.body).subject === 'LinkFault')!;
      r3.send(linkFault);
      const recordedUnroute = decodeBody<{ now: boolean }>(
        'ctrl.Unroute',
        bodyOf(framesOf(r1Recorded, 'out', ContentType.unroute)[0]!),
      );
      expect(recordedUnroute.now).toBe(true);
      for (const router of [r1, r2, r3]) {
        const unroute = decodeBody('ctrl.Unroute', (await router.next(ContentType.unroute)).body);
        expect(unroute).toEqual({ circuitId: ingress.circuitId, now: recordedUnroute.now });
      }
      const emptied = await call('GET', `/sessions/${session.id}/route-path`);
      expect(emptied.body.data).toEqual({ routePath: [] });
    });
  });
}
