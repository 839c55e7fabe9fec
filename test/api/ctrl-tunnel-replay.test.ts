import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { messageOfRecord, type RecordedFrame } from '#ctrl-channel/frame-recorder.ts';
import { type ChannelMessage, ContentType, Header, int32Header } from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, dialCtrl, enrolledEdgeRouter, type Route } from '../support/ctrl-router.ts';

/**
 * The router's side of the tunneler's end-to-end run (test/data/ctrl-channel/tunneler-v2.0.0-pre12.jsonl, its README
 * says how it was made): the reference router, tunneling in proxy mode, hosted a service by its host.v1 config and
 * intercepted it, its port check marking its terminator failed and healthy again. CI has no router: its frames are
 * sent again, in their order, by a tunneling router enrolled here, bound to this test's network (its id, the service's
 * id and name, the controller's own sequences and circuit ids), each once the controller has said what the router had
 * heard before it; the controller's side is checked by its shape against the recording.
 */
const RECORDING = join(import.meta.dirname, '../data/ctrl-channel/tunneler-v2.0.0-pre12.jsonl');

const recorded = readFileSync(RECORDING, 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as RecordedFrame);
const recordedIn = recorded.filter((frame) => frame.direction === 'in');

interface DataEvent {
  identity?: { id: string };
  service?: { id: string; name: string; configs: string[] };
  servicePolicy?: { id: string; policyType: string };
  servicePolicyChange?: { policyId: string; relatedEntityIds: string[]; relatedEntityType: string };
  configType?: { id: string; name: string };
  config?: { id: string; typeId: string; dataJson: string };
}
interface DataState {
  events: DataEvent[];
}
interface TunnelTerminatorRequest {
  serviceId: string;
  address: string;
  startTime: number;
}
interface TunnelCircuitRequest {
  serviceName: string;
  peerData: Record<string, Buffer>;
}
interface TunnelCircuitResponse {
  circuitId: string;
  address: string;
  peerData: Record<string, Buffer>;
  tags: Record<string, string>;
}

const ofType = (frames: readonly RecordedFrame[], contentType: number) =>
  frames.filter((frame) => frame.contentType === contentType);
const bodyOf = (frame: RecordedFrame) => Buffer.from(frame.bodyHex, 'hex');
const recordedStates = ofType(recorded, ContentType.dataState).map((frame) =>
  decodeBody<DataState>('edge.DataState', bodyOf(frame)),
);
const recordedService = recordedStates[0]!.events.find((event) => event.service)!.service!;
const recordedCreates = ofType(recorded, ContentType.createTunnelTerminatorRequestV2).map((frame) =>
  decodeBody<TunnelTerminatorRequest>('edge.CreateTunnelTerminatorRequestV2', bodyOf(frame)),
);
const recordedDials = ofType(recorded, ContentType.createTunnelCircuitV2Request).map((frame) =>
  decodeBody<TunnelCircuitRequest>('edge.CreateTunnelCircuitV2Request', bodyOf(frame)),
);
const recordedRoutes = ofType(recorded, ContentType.route).map((frame) =>
  decodeBody<Route>('ctrl.Route', bodyOf(frame)),
);
const recordedRouteResults = ofType(recorded, ContentType.routeResult);
const policyTypesOf = (state: DataState) => state.events.flatMap((event) => event.servicePolicy?.policyType ?? []);

/** What the controller said before the router sent a frame: its messages of each type recorded since the start. */
const WAITED_FOR = [
  ContentType.serverHello,
  ContentType.result,
  ContentType.createTunnelTerminatorResponseV2,
  ContentType.route,
  ContentType.createTunnelCircuitV2Response,
  ContentType.updateTunnelTerminatorResponse,
  ContentType.unroute,
];
function heardBefore(frame: RecordedFrame): Map<number, number> {
  const before = recorded.slice(0, recorded.indexOf(frame)).filter((other) => other.direction === 'out');
  // The hello's answer is the hello's own (`RouterEnd.hello`), not among the controller's other messages.
  const counted = before.filter((other) => other.replyFor !== -1);
  return new Map(WAITED_FOR.map((type) => [type, ofType(counted, type).length]));
}

const { controller, call, createdId } = useAdminController();
let router: { id: string; credentials: Credentials };
let service: { id: string; name: string };
let config: string;

beforeAll(async () => {
  router = await enrolledEdgeRouter(controller, call, 'replayed-tunneler', { isTunnelerEnabled: true });
  const hostV1 = (await call('GET', `/config-types?filter=${encodeURIComponent('name = "host.v1"')}`)).body.data[0].id;
  // The run's service: end-to-end encryption, hosted by the router by a host.v1 config with a port check.
  const recordedConfig = recordedStates[0]!.events.find((event) => event.config)!.config!;
  config = await createdId('/configs', {
    name: 'replayed-echo-host',
    configTypeId: hostV1,
    data: JSON.parse(recordedConfig.dataJson),
  });
  const name = 'replayed-echo';
  service = { id: await createdId('/services', { name, encryptionRequired: true, configs: [config] }), name };
  await createdId('/service-policies', {
    name: 'replayed-bind',
    type: 'Bind',
    semantic: 'AnyOf',
    identityRoles: [`@${router.id}`],
    serviceRoles: [`@${service.id}`],
  });
  await createdId('/service-edge-router-policies', {
    name: 'replayed-serp',
    semantic: 'AnyOf',
    serviceRoles: [`@${service.id}`],
    edgeRouterRoles: [`@${router.id}`],
  });
});

describe("the reference router's recorded tunneler run, replayed", () => {
  it('is what the recording says: a model pushed once Dial was granted, the service hosted, intercepted, its health reported', () => {
    expect(recordedIn.map((frame) => frame.contentType)).toEqual([
      ContentType.hello,
      ContentType.routerLinks,
      ContentType.subscribeToDataModelRequest,
      ContentType.clientHello,
      ContentType.createTunnelTerminatorRequestV2,
      ContentType.tunnelHealthEvent,
      // The pushed model granted Dial too: the router hosts the service anew (a new terminator, the old one removed).
      ContentType.createTunnelTerminatorRequestV2,
      ContentType.removeTerminatorsRequest,
      ContentType.tunnelHealthEvent,
      ContentType.createTunnelCircuitV2Request,
      ContentType.routeResult,
      // The echo server down: unhealthy, its terminator marked failed; up again: healthy, default.
      ContentType.tunnelHealthEvent,
      ContentType.updateTunnelTerminatorRequest,
      ContentType.tunnelHealthEvent,
      ContentType.updateTunnelTerminatorRequest,
      ContentType.fault,
      ContentType.fault,
      ContentType.createTunnelCircuitV2Request,
      ContentType.routeResult,
    ]);
    expect(recordedStates.map(policyTypesOf)).toEqual([
      ['BindPolicy'],
      expect.arrayContaining(['BindPolicy', 'DialPolicy']),
    ]);
    const subscriptions = ofType(recorded, ContentType.dataState).map(
      (frame) => frame.headers.find((header) => header.id === Header.routerDataModelSubscriptionId)?.decoded,
    );
    expect(subscriptions[1]).toBe(subscriptions[0]);
    expect(recordedCreates.map((create) => create.serviceId)).toEqual([recordedService.id, recordedService.id]);
    expect(recordedDials.map((dial) => dial.serviceName)).toEqual([recordedService.name, recordedService.name]);
    for (const route of recordedRoutes) {
      expect(route.egress).toMatchObject({ binding: 'tunnel', destination: recordedCreates[1]!.address });
    }
    const updates = ofType(recorded, ContentType.updateTunnelTerminatorRequest).map((frame) =>
      decodeBody<{ terminatorId: string; precedence: string }>('edge.UpdateTunnelTerminatorRequest', bodyOf(frame)),
    );
    expect(updates).toEqual([
      expect.objectContaining({ terminatorId: recordedCreates[1]!.address, precedence: 'Failed' }),
      expect.objectContaining({ terminatorId: recordedCreates[1]!.address, precedence: 'Default' }),
    ]);
  });

  it("answers the router's frames as it answered the real router: model, pushed model, terminators, circuits, health, their end", async () => {
    const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true, answerServerHello: false });
    const received: ChannelMessage[] = [];
    const receivedOf = (contentType: number) => received.filter((message) => message.contentType === contentType);
    const until = async (what: string, done: () => boolean, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!done()) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${what} from the controller within ${timeoutMs} ms`);
        received.push(await end.next(left));
      }
    };
    const linesBefore = controller().logLines.length;
    let dialGranted = false;
    const circuitIds = new Map<string, string>();

    /** This run's message that stands for the recorded one of sequence `sequence` (the same type and rank). */
    const inRun = (sequence: number) => {
      const frame = recorded.find((other) => other.direction === 'out' && other.sequence === sequence)!;
      const rank = ofType(recorded, frame.contentType)
        .filter((other) => other.direction === 'out')
        .indexOf(frame);
      return receivedOf(frame.contentType)[rank]!;
    };

    function boundToRun(frame: RecordedFrame): ChannelMessage {
      const message = messageOfRecord({
        ...frame,
        headers: frame.headers.filter((header) => header.hex !== undefined),
      });
      const headers = new Map(message.headers);
      let body = message.body;
      const answered = frame.replyFor === undefined || frame.replyFor === -1 ? undefined : inRun(frame.replyFor);
      if (answered) headers.set(Header.replyFor, int32Header(answered.sequence));
      switch (frame.contentType) {
        case ContentType.hello:
          body = Buffer.from(router.id);
          break;
        case ContentType.createTunnelTerminatorRequestV2: {
          const request = decodeBody<TunnelTerminatorRequest>('edge.CreateTunnelTerminatorRequestV2', body);
          body = encodeBody('edge.CreateTunnelTerminatorRequestV2', { ...request, serviceId: service.id });
          break;
        }
        case ContentType.createTunnelCircuitV2Request: {
          const request = decodeBody<TunnelCircuitRequest>('edge.CreateTunnelCircuitV2Request', body);
          body = encodeBody('edge.CreateTunnelCircuitV2Request', { ...request, serviceName: service.name });
          break;
        }
        case ContentType.routeResult: {
          const { circuitId } = decodeBody<Route>('ctrl.Route', answered!.body);
          circuitIds.set(body.toString(), circuitId);
          body = Buffer.from(circuitId);
          break;
        }
        case ContentType.fault: {
          const fault = decodeBody<{ subject: string; id: string }>('ctrl.Fault', body);
          body = encodeBody('ctrl.Fault', { ...fault, id: circuitIds.get(fault.id) ?? fault.id });
          break;
        }
      }
      return { ...message, headers, body };
    }

    const [hello, ...frames] = recordedIn;
    const helloAnswer = await end.hello(router.id, boundToRun(hello!).headers);
    expect(helloAnswer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
    for (const frame of frames) {
      // The router heard its model granting Dial before it sent these: the Dial policy is made as in the run.
      const states = ofType(recorded.slice(0, recorded.indexOf(frame)), ContentType.dataState).length;
      if (states >= 1) await until('data model', () => receivedOf(ContentType.dataState).length >= 1);
      if (states >= 2 && !dialGranted) {
        dialGranted = true;
        await createdId('/service-policies', {
          name: 'replayed-dial',
          type: 'Dial',
          semantic: 'AnyOf',
          identityRoles: [`@${router.id}`],
          serviceRoles: [`@${service.id}`],
        });
        await until('pushed data model', () =>
          receivedOf(ContentType.dataState).some((state) =>
            policyTypesOf(decodeBody<DataState>('edge.DataState', state.body)).includes('DialPolicy'),
          ),
        );
      }
      for (const [type, count] of heardBefore(frame)) {
        await until(`${count} of message ${type}`, () => receivedOf(type).length >= count);
      }
      end.send(boundToRun(frame));
    }
    const expected = heardBefore(recorded.at(-1)!);
    expected.set(
      ContentType.createTunnelCircuitV2Response,
      ofType(recorded, ContentType.createTunnelCircuitV2Response).length,
    );
    for (const [type, count] of expected)
      await until(`${count} of message ${type}`, () => receivedOf(type).length >= count);

    // The model: the service with its config by its type's name, granted by Bind; pushed under the same subscription
    // with Dial once granted.
    const states = receivedOf(ContentType.dataState);
    const subscriptionOf = (message: ChannelMessage) =>
      message.headers.get(Header.routerDataModelSubscriptionId)?.toString();
    const recordedSubscription = ofType(recordedIn, ContentType.subscribeToDataModelRequest).map(
      (frame) =>
        decodeBody<{ subscriptionId: string }>('edge.SubscribeToDataModelRequest', bodyOf(frame)).subscriptionId,
    )[0];
    expect(subscriptionOf(states[0]!)).toBe(recordedSubscription);
    expect(new Set(states.map(subscriptionOf)).size).toBe(1);
    const first = decodeBody<DataState>('edge.DataState', states[0]!.body);
    expect(first.events.flatMap((event) => event.service ?? [])).toEqual([
      expect.objectContaining({ id: service.id, configs: [config] }),
    ]);
    expect(first.events.flatMap((event) => event.configType?.name ?? [])).toEqual(['host.v1']);
    expect(policyTypesOf(first)).toEqual(['BindPolicy']);
    expect(policyTypesOf(decodeBody<DataState>('edge.DataState', states.at(-1)!.body)).sort()).toEqual([
      'BindPolicy',
      'DialPolicy',
    ]);

    // Both terminators created, answered with the router's start times; the first removed, the second marked failed
    // and healthy again by the router's updates.
    const created = receivedOf(ContentType.createTunnelTerminatorResponseV2).map((message) =>
      decodeBody('edge.CreateTunnelTerminatorResponseV2', message.body),
    );
    expect(created).toEqual(
      recordedCreates.map((create) =>
        expect.objectContaining({ terminatorId: create.address, startTime: create.startTime, result: 'Success' }),
      ),
    );
    expect(receivedOf(ContentType.result).at(-1)?.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
    expect((await call('GET', `/terminators/${recordedCreates[0]!.address}`)).status).toBe(404);
    expect((await call('GET', `/terminators/${recordedCreates[1]!.address}`)).body.data).toMatchObject({
      binding: 'tunnel',
      routerId: router.id,
      precedence: 'default',
    });
    expect(receivedOf(ContentType.updateTunnelTerminatorResponse)).toHaveLength(2);
    const healthLogged = controller()
      .logLines.slice(linesBefore)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.message === 'tunnel health check')
      .map((line) => line.passed);
    expect(healthLogged.slice(-2)).toEqual([false, true]);

    // Each intercepted connection routed to the router's own terminator, its client the router; answered with the
    // ingress address and the host's key from the route's result; the first ended by its faults.
    const routes = receivedOf(ContentType.route).map((message) => decodeBody<Route>('ctrl.Route', message.body));
    const answers = receivedOf(ContentType.createTunnelCircuitV2Response).map((message) =>
      decodeBody<TunnelCircuitResponse>('edge.CreateTunnelCircuitV2Response', message.body),
    );
    routes.forEach((route, index) => {
      expect(route).toMatchObject({
        egress: {
          binding: 'tunnel',
          destination: recordedCreates[1]!.address,
          peerData: recordedDials[index]!.peerData,
        },
        tags: { serviceId: service.id, clientId: router.id, hostId: router.id },
      });
      const hostKey = messageOfRecord(recordedRouteResults[index]!).headers.get(1003);
      expect(answers[index]).toMatchObject({
        circuitId: route.circuitId,
        address: route.forwards[0]!.srcAddress,
        peerData: expect.objectContaining({ 1003: hostKey }),
        tags: route.tags,
      });
    });
    expect(receivedOf(ContentType.unroute).map((message) => decodeBody('ctrl.Unroute', message.body))).toEqual([
      { circuitId: routes[0]!.circuitId, now: false },
    ]);
    end.socket.destroy();
  });
});
