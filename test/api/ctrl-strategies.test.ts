import { beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import {
  boolHeader,
  type ChannelMessage,
  ContentType,
  Header,
  int32Header,
  uint32BytesMapHeader,
  uint32BytesMapOf,
  uint32Header,
} from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { STICKINESS_TOKEN_HEADER } from '#ctrl-channel/terminator-strategies.ts';
import { routerTerminators } from '#ctrl-channel/terminators.ts';
import { storedCircuits } from '#shared/store/circuit-items.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { onlineEdgeRouter, type Route, type RouterEnd } from '../support/ctrl-router.ts';
import { edgeNetwork } from '../support/edge-network.ts';
import { seededRandom } from '../support/seeded-random.ts';

// The strategies' draws are seeded: each run of this file sees the same choices.
const { controller, call } = useAdminController(
  {},
  {
    ctrlTimings: { heartbeatIntervalMs: 200, unresponsiveTimeoutMs: 2_000, replyTimeoutMs: 300, routeTimeoutMs: 2_000 },
    ctrlFeatures: [routerInterfaces, routerTerminators, circuits],
    ctrlRandom: seededRandom(37),
  },
);

// Tens of dials, each a session check, a route, a stored circuit and its end: a few hundred milliseconds apiece when
// the machine is shared with other test files.
const DISTRIBUTION_TIMEOUT_MS = 120_000;

let routerId: string;
let router: RouterEnd;
let sequence = 100;

beforeAll(async () => {
  ({ id: routerId, end: router } = await onlineEdgeRouter(controller, call, 'strategy-router'));
});

/** A service of its own (no end-to-end encryption: no keys to pass) with terminators on the router, by address. */
async function serviceWith(
  service: Record<string, unknown>,
  terminators: { address: string; cost?: number; precedence?: string }[],
) {
  const network = await edgeNetwork(controller, call, routerId, { encryptionRequired: false, ...service });
  const ids = new Map<string, string>();
  for (const { address, cost = 0, precedence = 'default' } of terminators) {
    const created = await call('POST', '/terminators', {
      service: network.serviceId,
      router: routerId,
      binding: 'edge',
      address,
      cost,
      precedence,
    });
    expect(created.status).toBe(201);
    ids.set(address, created.body.data.id);
  }
  const session = await network.dialer.session('Dial');
  return { network, session, ids };
}

/** What one dial came to: the terminators its routes went to, in order, and its answer. */
interface Dialled {
  readonly circuitId: string;
  readonly destinations: string[];
  readonly answer: ChannelMessage;
}

/**
 * The router asks for a circuit and answers each Route as the terminator at its destination would (`succeeds`), until
 * the controller answers the dial. With `end`, the made circuit then ends (an IngressFault, its Unroute awaited).
 */
async function dial(
  made: Awaited<ReturnType<typeof serviceWith>>,
  options: { succeeds?: (destination: string) => boolean; end?: boolean; peerData?: Map<number, Buffer> } = {},
): Promise<Dialled> {
  const { succeeds = () => true, end = true, peerData = new Map() } = options;
  router.send({
    contentType: ContentType.createCircuitV2Request,
    sequence: ++sequence,
    headers: new Map([
      [11, Buffer.from(made.session.token)],
      [14, Buffer.from(made.network.dialer.apiSessionToken)],
      [10, uint32BytesMapHeader(peerData)],
    ]),
  });
  const destinations: string[] = [];
  let circuitId = '';
  for (;;) {
    const message = await router.next(5_000);
    if (message.contentType === ContentType.unroute) continue; // a failed attempt's cleanup
    if (message.contentType !== ContentType.route) {
      if (end && message.contentType === ContentType.createCircuitV2Response) await endCircuit(circuitId);
      return { circuitId, destinations, answer: message };
    }
    const route = decodeBody<Route>('ctrl.Route', message.body);
    circuitId = route.circuitId;
    destinations.push(route.egress.destination);
    const result: [number, Buffer][] = succeeds(route.egress.destination)
      ? [[1102, boolHeader(true)]]
      : [
          [1103, Buffer.from('dial refused')],
          [1104, Buffer.from([3])],
        ];
    router.send({
      contentType: ContentType.routeResult,
      sequence: ++sequence,
      headers: new Map([
        [Header.replyFor, int32Header(message.sequence)],
        [1101, uint32Header(route.attempt)],
        ...result,
      ]),
      body: Buffer.from(route.circuitId),
    });
  }
}

async function endCircuit(circuitId: string): Promise<void> {
  router.send({
    contentType: ContentType.fault,
    sequence: ++sequence,
    body: encodeBody('ctrl.Fault', { subject: 'IngressFault', id: circuitId }),
  });
  const unroute = await router.next(5_000);
  expect(unroute.contentType).toBe(ContentType.unroute);
}

/** Each terminator's share of the circuits made over `times` dials (each circuit ended before the next dial). */
async function shares(made: Awaited<ReturnType<typeof serviceWith>>, times: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < times; i++) {
    const { destinations, answer } = await dial(made);
    expect(answer.contentType).toBe(ContentType.createCircuitV2Response);
    const destination = destinations.at(-1)!;
    counts[destination] = (counts[destination] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).map(([address, count]) => [address, count / times]));
}

describe('terminator strategies, over the control channel', () => {
  it(
    'weighted: chooses in inverse proportion to cost, within the leading precedence',
    async () => {
      const made = await serviceWith({ terminatorStrategy: 'weighted' }, [
        { address: 'cheap', cost: 100 },
        { address: 'dear', cost: 300 },
        { address: 'failed', cost: 0, precedence: 'failed' },
      ]);

      const chosen = await shares(made, 60);

      // Weights 1 − 100/400 = 0.75 and 1 − 300/400 = 0.25, normalised.
      expect(chosen.cheap).toBeGreaterThan(0.6);
      expect(chosen.cheap).toBeLessThan(0.9);
      expect(chosen.dear).toBeGreaterThan(0.1);
      expect(chosen.failed).toBeUndefined();
    },
    DISTRIBUTION_TIMEOUT_MS,
  );

  it(
    'random: uniform within the leading precedence, whatever the costs',
    async () => {
      const made = await serviceWith({ terminatorStrategy: 'random' }, [
        { address: 'one', cost: 1 },
        { address: 'two', cost: 500 },
        { address: 'three', cost: 60_000 },
        { address: 'failed', cost: 0, precedence: 'failed' },
      ]);

      const chosen = await shares(made, 60);

      for (const address of ['one', 'two', 'three']) {
        expect(chosen[address]).toBeGreaterThan(0.18);
        expect(chosen[address]).toBeLessThan(0.5);
      }
      expect(chosen.failed).toBeUndefined();
    },
    DISTRIBUTION_TIMEOUT_MS,
  );

  it(
    'smartrouting: the cheapest, until its routes fail; then the other, and the failed one is not tried again soon',
    async () => {
      const made = await serviceWith({ terminatorStrategy: 'smartrouting' }, [
        { address: 'failing', cost: 0 },
        { address: 'healthy', cost: 10 },
      ]);
      const routesTo: string[] = [];

      for (let i = 0; i < 30; i++) {
        const { destinations, answer } = await dial(made, { succeeds: (destination) => destination !== 'failing' });
        expect(answer.contentType).toBe(ContentType.createCircuitV2Response);
        routesTo.push(...destinations);
      }

      // The first dial tries `failing` (static cost 0 < 10) and fails over to `healthy`; the failure cost (20) then
      // keeps `failing` above `healthy` (10, its circuits ended) for minutes.
      expect(routesTo.slice(0, 2)).toEqual(['failing', 'healthy']);
      expect(routesTo.filter((address) => address === 'failing')).toHaveLength(1);
    },
    DISTRIBUTION_TIMEOUT_MS,
  );

  it(
    'smartrouting: open circuits count against their terminator, so equals share the load',
    async () => {
      const made = await serviceWith({}, [{ address: 'left' }, { address: 'right' }]);
      const circuitsOf: Record<string, string[]> = { left: [], right: [] };

      for (let i = 0; i < 20; i++) {
        const { circuitId, destinations } = await dial(made, { end: false });
        circuitsOf[destinations[0]!]!.push(circuitId);
      }

      expect(circuitsOf.left).toHaveLength(10);
      expect(circuitsOf.right).toHaveLength(10);
      for (const circuitId of [...circuitsOf.left!, ...circuitsOf.right!]) await endCircuit(circuitId);
    },
    DISTRIBUTION_TIMEOUT_MS,
  );

  it('sticky: the dialer gets its terminator as a token, and the token brings it back there', async () => {
    const made = await serviceWith({ terminatorStrategy: 'sticky' }, [
      { address: 'first', cost: 1 },
      { address: 'second', cost: 2 },
    ]);
    const tokenOf = ({ answer }: Dialled) => uint32BytesMapOf(answer, 10).get(STICKINESS_TOKEN_HEADER)?.toString();
    const secondId = made.ids.get('second')!;

    const fresh = await dial(made);
    const returning = await dial(made, { peerData: new Map([[STICKINESS_TOKEN_HEADER, Buffer.from(secondId)]]) });

    expect(fresh.destinations).toEqual(['first']);
    expect(tokenOf(fresh)).toBe(made.ids.get('first'));
    expect(returning.destinations).toEqual(['second']);
    expect(tokenOf(returning)).toBe(secondId);
  });
});

describe("a service's maxIdleTime", () => {
  it('unroutes and removes a circuit its router confirms idle past it, and keeps one idle for less', async () => {
    const made = await serviceWith({ maxIdleTimeMillis: 60_000 }, [{ address: 'idle-host' }]);
    const idle = await dial(made, { end: false });
    const busy = await dial(made, { end: false });

    router.send({
      contentType: ContentType.circuitConfirmation,
      sequence: ++sequence,
      body: encodeBody('ctrl.CircuitConfirmation', {
        circuitIds: [idle.circuitId, busy.circuitId],
        idleTimes: { [idle.circuitId]: 61e9, [busy.circuitId]: 5e9 },
      }),
    });
    const unroute = await router.next(5_000);

    expect(unroute.contentType).toBe(ContentType.unroute);
    expect(decodeBody('ctrl.Unroute', unroute.body)).toEqual({ circuitId: idle.circuitId, now: true });
    await expect(router.next(400)).rejects.toThrow();
    const stored = await storedCircuits(controller().deps.store, [idle.circuitId, busy.circuitId], new Date());
    expect([...stored.keys()]).toEqual([busy.circuitId]);
    await endCircuit(busy.circuitId);
  });

  it('keeps every idle circuit of a service without a limit', async () => {
    const made = await serviceWith({ maxIdleTimeMillis: 0 }, [{ address: 'unlimited-host' }]);
    const { circuitId } = await dial(made, { end: false });

    router.send({
      contentType: ContentType.circuitConfirmation,
      sequence: ++sequence,
      body: encodeBody('ctrl.CircuitConfirmation', { circuitIds: [circuitId], idleTimes: { [circuitId]: 1e13 } }),
    });

    await expect(router.next(400)).rejects.toThrow();
    await endCircuit(circuitId);
  });
});
