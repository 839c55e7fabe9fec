import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import {
  boolHeader,
  type ChannelMessage,
  ContentType,
  Header,
  int32Header,
  replyForOf,
  TunnelHealthHeader,
  uint32Header,
} from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { terminatorsFeature } from '#ctrl-channel/terminators.ts';
import { routerTunnel } from '#ctrl-channel/tunnel.ts';
import { storedCircuits } from '#shared/store/circuit-items.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, dialCtrl, enrolledEdgeRouter, type Route, type RouterEnd } from '../support/ctrl-router.ts';
import { usableTerminators } from '../support/usable-terminators.ts';

// Short heartbeats and route timeout; a short grace for re-sent terminators. Terminators, circuits and the tunnel only:
// no edge hello, sync or data model messages between the ones these tests read.
const TIMINGS = { heartbeatIntervalMs: 200, unresponsiveTimeoutMs: 3_000, replyTimeoutMs: 300, routeTimeoutMs: 400 };
const RECONFIRM_GRACE_MS = 1_500;
const { controller, call, createdId } = useAdminController(
  {},
  {
    ctrlTimings: TIMINGS,
    ctrlFeatures: [
      routerInterfaces,
      terminatorsFeature({ reconfirmGraceMs: RECONFIRM_GRACE_MS }),
      circuits,
      routerTunnel,
    ],
  },
);

const PUBLIC_KEY = 1003;
const ROUTER_KEY = Buffer.from('tunnel-dialer-public-key');
const HOST_KEY = Buffer.from('tunnel-host-public-key');

let counter = 0;
const unique = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`;
const tag = unique('tunnel');

type Router = { id: string; credentials: Credentials };
let tunneler: Router;
let plain: Router;
/** Granted Bind and Dial to the tunneler's identity, reachable through it. */
let hosted: { id: string; name: string };
/** Granted Bind only. */
let bindOnly: { id: string; name: string };
/** Granted neither. */
let ungranted: { id: string; name: string };
/** Granted Bind and Dial, but no service edge router policy lets it through the tunneler. */
let unreachable: { id: string; name: string };

async function serviceNamed(prefix: string, roleAttributes: string[]) {
  const name = unique(prefix);
  return { id: await createdId('/services', { name, roleAttributes, encryptionRequired: true }), name };
}

beforeAll(async () => {
  tunneler = await enrolledEdgeRouter(controller, call, unique('tunnel-er'), { isTunnelerEnabled: true });
  plain = await enrolledEdgeRouter(controller, call, unique('tunnel-plain-er'));
  hosted = await serviceNamed('tunnel-hosted', [`${tag}-bind`, `${tag}-dial`, `${tag}-reached`]);
  bindOnly = await serviceNamed('tunnel-bind-only', [`${tag}-bind`, `${tag}-reached`]);
  ungranted = await serviceNamed('tunnel-ungranted', [`${tag}-reached`]);
  unreachable = await serviceNamed('tunnel-unreachable', [`${tag}-bind`, `${tag}-dial`]);
  for (const type of ['Bind', 'Dial'] as const) {
    await createdId('/service-policies', {
      name: unique(`tunnel-${type}`),
      semantic: 'AnyOf',
      type,
      // The router's identity, as an administrator grants it: by its id (the router's).
      identityRoles: [`@${tunneler.id}`],
      serviceRoles: [`#${tag}-${type.toLowerCase()}`],
    });
  }
  // The router's identity may use the router by its system edge router policy; the services need a way through it.
  await createdId('/service-edge-router-policies', {
    name: unique('tunnel-serp'),
    semantic: 'AnyOf',
    serviceRoles: [`#${tag}-reached`],
    edgeRouterRoles: [`@${tunneler.id}`, `@${plain.id}`],
  });
});

async function connect(which: Router): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), which.credentials, { answerHeartbeats: true });
  const answer = await end.hello(which.id);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
  return end;
}

let sequence = 1;

/** Sends a message and waits for the controller's reply to it, past whatever else the controller sends meanwhile. */
async function ask(end: RouterEnd, message: { contentType: number; body?: Buffer; headers?: Map<number, Buffer> }) {
  const sent = ++sequence;
  end.send({ ...message, sequence: sent });
  for (;;) {
    const answer = await end.next();
    if (replyForOf(answer) === sent) return answer;
  }
}

interface CreateResponse {
  terminatorId: string;
  startTime: number;
  result: string;
  msg: string;
  errorCode: number;
  retryHint: number;
}

/** What a tunneling router sends to host a service (20413), as `hosted.go: establishTerminator` fills it. */
async function host(end: RouterEnd, fields: Record<string, unknown>): Promise<CreateResponse> {
  const answer = await ask(end, {
    contentType: ContentType.createTunnelTerminatorRequestV2,
    body: encodeBody('edge.CreateTunnelTerminatorRequestV2', {
      address: randomUUID(),
      cost: 0,
      precedence: 'Default',
      startTime: 1_766_000_000_000,
      ...fields,
    }),
  });
  expect(answer.contentType).toBe(ContentType.createTunnelTerminatorResponseV2);
  return decodeBody<CreateResponse>('edge.CreateTunnelTerminatorResponseV2', answer.body);
}

const errorOf = (message: ChannelMessage) => ({
  contentType: message.contentType,
  text: message.body.toString(),
  code: message.headers.get(1014)?.readUInt32LE(0),
});

const terminatorShown = async (id: string) => call('GET', `/terminators/${id}`);

/** Deletes every terminator of a service (those earlier tests left), as an administrator would. */
async function clearTerminators(serviceId: string): Promise<void> {
  const listed = await call('GET', `/terminators?filter=${encodeURIComponent(`service = "${serviceId}"`)}`);
  for (const { id } of listed.body.data as { id: string }[]) await call('DELETE', `/terminators/${id}`);
}

describe("a tunneling router's terminators: the services its own identity may Bind, hosted by the router", () => {
  it('creates the terminator as the reference does (binding tunnel, its identity the host), answers with the start time, and takes it re-sent', async () => {
    const end = await connect(tunneler);
    const address = randomUUID();

    const response = await host(end, { serviceId: hosted.id, address, cost: 3, precedence: 'Required' });

    expect(response).toMatchObject({ terminatorId: address, startTime: 1_766_000_000_000, result: 'Success' });
    const shown = await terminatorShown(address);
    expect(shown.body.data).toMatchObject({
      id: address,
      serviceId: hosted.id,
      routerId: tunneler.id,
      binding: 'tunnel',
      address,
      cost: 3,
      precedence: 'required',
    });
    const [usable] = await usableTerminators(controller().deps, hosted.id);
    expect(usable).toMatchObject({ id: address, hostId: tunneler.id });
    // The router re-sends it after a reconnect (or a busy answer): the same, no conflict.
    expect(await host(end, { serviceId: hosted.id, address, cost: 3, precedence: 'Required' })).toMatchObject({
      result: 'Success',
    });
    end.socket.destroy();
  });

  it('refuses as the reference refuses: no id, no Bind grant or no service alike, no way through the router, a cost past a u16, no tunneling, an id that is not its own', async () => {
    const end = await connect(tunneler);
    const refusal = (response: CreateResponse) => ({ result: response.result, code: response.errorCode });

    expect(refusal(await host(end, { serviceId: hosted.id, address: '' }))).toEqual({ result: 'FailedOther', code: 8 });
    const notGranted = await host(end, { serviceId: ungranted.id });
    const unknown = await host(end, { serviceId: 'no-such-service' });
    expect(refusal(notGranted)).toEqual({ result: 'FailedOther', code: 6 });
    expect(unknown.msg).toBe(notGranted.msg);
    expect(refusal(await host(end, { serviceId: unreachable.id }))).toEqual({ result: 'FailedOther', code: 5 });
    expect(refusal(await host(end, { serviceId: hosted.id, cost: 70_000 }))).toEqual({
      result: 'FailedOther',
      code: 10,
    });
    const taken = (await host(end, { serviceId: hosted.id })).terminatorId;
    const conflict = await host(end, { serviceId: bindOnly.id, address: taken });
    expect(conflict).toMatchObject({ result: 'FailedOther', msg: 'the terminator id is taken', retryHint: 3 });
    end.socket.destroy();

    const other = await connect(plain);
    const notTunneling = await host(other, { serviceId: hosted.id });
    expect(notTunneling).toMatchObject({ result: 'FailedOther', errorCode: 7, msg: 'tunneling not enabled' });
    expect((await terminatorShown(notTunneling.terminatorId)).status).toBe(404);
    other.socket.destroy();
  });

  it("updates its own terminator's cost and precedence (20408 → 20409); another's, or an unknown one, is refused as not found", async () => {
    const end = await connect(tunneler);
    const { terminatorId } = await host(end, { serviceId: hosted.id, cost: 1 });
    const update = (id: string) =>
      ask(end, {
        contentType: ContentType.updateTunnelTerminatorRequest,
        body: encodeBody('edge.UpdateTunnelTerminatorRequest', {
          terminatorId: id,
          cost: 9,
          precedence: 'Failed',
          updateCost: true,
          updatePrecedence: true,
        }),
      });

    const answer = await update(terminatorId);

    expect(answer.contentType).toBe(ContentType.updateTunnelTerminatorResponse);
    expect(answer.body.length).toBe(0);
    expect((await terminatorShown(terminatorId)).body.data).toMatchObject({ cost: 9, precedence: 'failed' });
    // One an administrator made on this router, with the tunnel's binding: not the router's own.
    const administered = await createdId('/terminators', {
      service: hosted.id,
      router: tunneler.id,
      binding: 'tunnel',
      address: 'administered',
    });
    for (const id of [administered, 'no-such-terminator']) {
      expect(errorOf(await update(id))).toEqual({
        contentType: ContentType.error,
        text: 'invalid terminator: not found',
        code: 8,
      });
    }
    expect((await terminatorShown(administered)).body.data).toMatchObject({ cost: 0 });
    end.socket.destroy();
  });

  it('removes what it no longer hosts (RemoveTerminatorsRequest, 1038), and logs the health checks of its own terminators', async () => {
    const end = await connect(tunneler);
    const { terminatorId } = await host(end, { serviceId: hosted.id });
    const linesBefore = controller().logLines.length;
    const health = (id: string, passed: boolean) =>
      end.send({
        contentType: ContentType.tunnelHealthEvent,
        sequence: ++sequence,
        headers: new Map([
          [TunnelHealthHeader.terminatorId, Buffer.from(id)],
          [TunnelHealthHeader.checkPassed, boolHeader(passed)],
        ]),
      });

    health(terminatorId, false);
    health('no-such-terminator', false);
    const removed = await ask(end, {
      contentType: ContentType.removeTerminatorsRequest,
      body: encodeBody('ctrl.RemoveTerminatorsRequest', { terminatorIds: [terminatorId] }),
    });

    expect(removed.contentType).toBe(ContentType.result);
    expect(removed.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
    expect((await terminatorShown(terminatorId)).status).toBe(404);
    const logged = controller()
      .logLines.slice(linesBefore)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.message === 'tunnel health check');
    expect(logged).toEqual([
      expect.objectContaining({ terminatorId, serviceId: hosted.id, passed: false, routerId: tunneler.id }),
    ]);
    end.socket.destroy();
  });

  it('deletes a tunnel terminator the router does not re-send within the grace after it reconnects, and keeps one it does', async () => {
    const first = await connect(tunneler);
    const kept = (await host(first, { serviceId: hosted.id })).terminatorId;
    const dropped = (await host(first, { serviceId: hosted.id })).terminatorId;
    first.socket.destroy();
    await first.closed;

    const second = await connect(tunneler);
    await host(second, { serviceId: hosted.id, address: kept });
    await new Promise((resolve) => setTimeout(resolve, RECONFIRM_GRACE_MS + 1_000));

    expect((await terminatorShown(kept)).status).toBe(200);
    expect((await terminatorShown(dropped)).status).toBe(404);
    second.socket.destroy();
  });
});

describe("a tunneling router's circuits: connections it intercepts to services its own identity may Dial", () => {
  /** What a tunneling router sends for an intercepted connection (20220), as `fabric.go: TunnelService` fills it. */
  const dial = (end: RouterEnd, fields: Record<string, unknown>) => {
    const sent = ++sequence;
    end.send({
      contentType: ContentType.createTunnelCircuitV2Request,
      sequence: sent,
      body: encodeBody('edge.CreateTunnelCircuitV2Request', { peerData: { [PUBLIC_KEY]: ROUTER_KEY }, ...fields }),
    });
    return sent;
  };
  const next = async (end: RouterEnd, contentType: number) => {
    let message = await end.next();
    while (message.contentType !== contentType) message = await end.next();
    return message;
  };

  it("routes it to a terminator of the service on the router, its client the router, and answers with the circuit, the ingress address and the host's key", async () => {
    const end = await connect(tunneler);
    await clearTerminators(hosted.id);
    const { terminatorId } = await host(end, { serviceId: hosted.id });

    const asked = dial(end, { serviceName: hosted.name });
    const routeMessage = await next(end, ContentType.route);
    const route = decodeBody<Route>('ctrl.Route', routeMessage.body);
    end.send({
      contentType: ContentType.routeResult,
      sequence: ++sequence,
      headers: new Map([
        [Header.replyFor, int32Header(routeMessage.sequence)],
        [1101, uint32Header(0)],
        [1102, boolHeader(true)],
        [PUBLIC_KEY, HOST_KEY],
      ]),
      body: Buffer.from(route.circuitId),
    });
    const answer = await next(end, ContentType.createTunnelCircuitV2Response);

    expect(route).toMatchObject({
      egress: { binding: 'tunnel', destination: terminatorId, peerData: { [PUBLIC_KEY]: ROUTER_KEY } },
      tags: { serviceId: hosted.id, clientId: tunneler.id, hostId: tunneler.id },
    });
    expect(replyForOf(answer)).toBe(asked);
    const response = decodeBody<{
      circuitId: string;
      address: string;
      peerData: Record<string, Buffer>;
      tags: Record<string, string>;
    }>('edge.CreateTunnelCircuitV2Response', answer.body);
    expect(response).toEqual({
      circuitId: route.circuitId,
      address: route.forwards[0]!.srcAddress,
      peerData: { [PUBLIC_KEY]: HOST_KEY },
      tags: route.tags,
    });
    await controller().ctrl.circuitsStored();
    const stored = await storedCircuits(controller().deps.store, [route.circuitId], new Date());
    expect(stored.get(route.circuitId)?.circuit).toMatchObject({ clientId: tunneler.id, path: [tunneler.id] });
    expect(stored.get(route.circuitId)?.circuit).not.toHaveProperty('sessionId');
    // Its end, as an SDK's: the first fault unroutes it.
    end.send({
      contentType: ContentType.fault,
      sequence: ++sequence,
      body: encodeBody('ctrl.Fault', { subject: 'IngressFault', id: route.circuitId }),
    });
    expect(decodeBody('ctrl.Unroute', (await next(end, ContentType.unroute)).body)).toEqual({
      circuitId: route.circuitId,
      now: false,
    });
    end.socket.destroy();
  });

  it('refuses a service not granted Dial as one that does not exist, one without the initiator key, a router that does not tunnel, and one with nowhere to go', async () => {
    const end = await connect(tunneler);
    const refused = async (router: RouterEnd, fields: Record<string, unknown>) => {
      const asked = dial(router, fields);
      const answer = await next(router, ContentType.error);
      expect(replyForOf(answer)).toBe(asked);
      return errorOf(answer);
    };

    const bindOnlyRefusal = await refused(end, { serviceName: bindOnly.name });
    expect(bindOnlyRefusal).toEqual({ contentType: ContentType.error, text: 'invalid service', code: 6 });
    expect(await refused(end, { serviceName: 'no-such-service' })).toEqual(bindOnlyRefusal);
    expect(await refused(end, { serviceName: unreachable.name })).toMatchObject({ code: 5 });
    expect(await refused(end, { serviceName: hosted.name, peerData: {} })).toMatchObject({ code: 11 });
    // Granted and reachable, but no terminator of it is hosted on this router.
    await clearTerminators(hosted.id);
    expect(await refused(end, { serviceName: hosted.name })).toMatchObject({ code: 1 });
    end.socket.destroy();

    const other = await connect(plain);
    expect(await refused(other, { serviceName: hosted.name })).toEqual({
      contentType: ContentType.error,
      text: 'tunneling not enabled',
      code: 7,
    });
    other.socket.destroy();
  });
});
