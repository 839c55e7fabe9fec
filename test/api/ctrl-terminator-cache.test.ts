import { beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import {
  boolHeader,
  type ChannelMessage,
  ContentType,
  Header,
  int32Header,
  stringSliceHeader,
  uint32BytesMapHeader,
  uint32Header,
} from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerTerminators } from '#ctrl-channel/terminators.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { onlineEdgeRouter, type Route, type RouterEnd } from '../support/ctrl-router.ts';
import { edgeNetwork } from '../support/edge-network.ts';

// The endpoint keeps each service's terminators in memory (`ctrl-channel/terminator-cache.ts`) for up to 30 s: a
// terminator written through the management API must change the next dial's choice once the change log's poll has
// passed the write (a second or two), so these prove that the write's notice drops what was kept.
const TIMINGS = { heartbeatIntervalMs: 200, unresponsiveTimeoutMs: 2_000, replyTimeoutMs: 300, routeTimeoutMs: 400 };
const { controller, call } = useAdminController(
  {},
  { ctrlTimings: TIMINGS, ctrlFeatures: [routerInterfaces, routerTerminators, circuits] },
);

const PUBLIC_KEY = 1003;

let routerId: string;
let router: RouterEnd;
let sequence = 100;

beforeAll(async () => {
  ({ id: routerId, end: router } = await onlineEdgeRouter(controller, call, 'terminator-cache-router'));
});

type Network = Awaited<ReturnType<typeof edgeNetwork>>;

/** The next message of a type, skipping the router's others (interfaces' answers). */
async function nextOf(...types: number[]): Promise<ChannelMessage> {
  for (;;) {
    const message = await router.next(5_000);
    if (types.includes(message.contentType)) return message;
  }
}

/** A terminator of the network's service on the router, made through the management API: its id. */
async function administered(network: Network, address: string, precedence = 'default'): Promise<string> {
  const created = await call('POST', '/terminators', {
    service: network.serviceId,
    router: routerId,
    binding: 'edge',
    address,
    precedence,
    peerData: {},
  });
  expect(created.status).toBe(201);
  return created.body.data.id as string;
}

/** The address of the terminator a dial of the network's service ends at (its circuit set up, then ended again). */
async function dialedAddress(network: Network): Promise<string> {
  const session = await network.dialer.session('Dial');
  router.send({
    contentType: ContentType.createCircuitV2Request,
    sequence: ++sequence,
    headers: new Map([
      [11, Buffer.from(session.token)],
      [14, Buffer.from(network.dialer.apiSessionToken)],
      [12, stringSliceHeader(['0123456789abcdef0123456789abcdef01234567'])],
      [13, Buffer.alloc(0)],
      [10, uint32BytesMapHeader(new Map([[PUBLIC_KEY, Buffer.from('dialer-key')]]))],
    ]),
  });
  const first = await nextOf(ContentType.route, ContentType.error);
  if (first.contentType === ContentType.error) throw new Error(`dial refused: ${first.body.toString()}`);
  const route = decodeBody<Route>('ctrl.Route', first.body);
  router.send({
    contentType: ContentType.routeResult,
    sequence: ++sequence,
    headers: new Map([
      [Header.replyFor, int32Header(first.sequence)],
      [1101, uint32Header(0)],
      [1102, boolHeader(true)],
      [PUBLIC_KEY, Buffer.from('host-key')],
    ]),
    body: Buffer.from(route.circuitId),
  });
  await nextOf(ContentType.createCircuitV2Response);
  router.send({
    contentType: ContentType.fault,
    sequence: ++sequence,
    body: encodeBody('ctrl.Fault', { subject: 'IngressFault', id: route.circuitId }),
  });
  await nextOf(ContentType.unroute);
  return route.egress.destination;
}

/**
 * Waits for the endpoint to have read the change log past what was written so far (the notices of a write): after a
 * test's set-up, so that what the first dial keeps is not dropped by the set-up's own notices.
 */
const noticed = () => controller().ctrl.changesRead();

describe("dials answered from a service's terminators kept in memory follow the terminators' changes", () => {
  it('no longer ends at a terminator deleted through the management API', async () => {
    const network = await edgeNetwork(controller, call, routerId);
    const best = await administered(network, 'best', 'required');
    await administered(network, 'other');
    await noticed();
    expect(await dialedAddress(network)).toBe('best');
    expect(await dialedAddress(network)).toBe('best');

    expect((await call('DELETE', `/terminators/${best}`)).status).toBe(200);
    await noticed();

    expect(await dialedAddress(network)).toBe('other');
  });

  it('ends at a terminator created since, when it ranks first', async () => {
    const network = await edgeNetwork(controller, call, routerId);
    await administered(network, 'first');
    await noticed();
    expect(await dialedAddress(network)).toBe('first');

    await administered(network, 'newer', 'required');
    await noticed();

    expect(await dialedAddress(network)).toBe('newer');
  });

  it("ends at once at a terminator a Bind through this endpoint's router created, without waiting for the log", async () => {
    const network = await edgeNetwork(controller, call, routerId);
    await administered(network, 'fallback', 'failed');
    await noticed();
    expect(await dialedAddress(network)).toBe('fallback');

    const bind = await network.host.session('Bind');
    // A poll just passed: the next comes a second later, after the Bind and the dial below.
    await noticed();
    const seq = ++sequence;
    router.send({
      contentType: ContentType.createTerminatorV2Request,
      sequence: seq,
      body: encodeBody('edge.CreateTerminatorV2Request', {
        address: 'bound',
        sessionToken: bind.token,
        apiSessionToken: network.host.apiSessionToken,
        peerData: { [PUBLIC_KEY]: Buffer.from('host-key') },
      }),
    });
    await nextOf(ContentType.createTerminatorV2Response);

    expect(await dialedAddress(network)).toBe('bound');
  });

  it("follows a terminator's precedence changed through the management API, either way", async () => {
    const network = await edgeNetwork(controller, call, routerId);
    const best = await administered(network, 'best', 'required');
    await administered(network, 'other');
    await noticed();
    expect(await dialedAddress(network)).toBe('best');

    expect((await call('PATCH', `/terminators/${best}`, { precedence: 'failed' })).status).toBe(200);
    await noticed();
    expect(await dialedAddress(network)).toBe('other');

    expect((await call('PATCH', `/terminators/${best}`, { precedence: 'required' })).status).toBe(200);
    await noticed();
    expect(await dialedAddress(network)).toBe('best');
  });
});
