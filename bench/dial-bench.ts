import {
  boolHeader,
  type ChannelMessage,
  ContentType,
  Header,
  int32Header,
  uint32BytesMapHeader,
  uint32Header,
} from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { dialCtrl, enrolledEdgeRouter, type Route, type RouterEnd } from '../test/support/ctrl-router.ts';
import { edgeNetwork } from '../test/support/edge-network.ts';
import { httpsCall, type RequestOptions } from '../test/support/https-client.ts';
import type { TestController } from '../test/support/test-controller.ts';
import type { SessionBenchOptions } from './api-session-bench.ts';
import { AWS_PRICES } from './aws-prices.ts';
import { startBenchController } from './bench-controller.ts';
import type { CapacityFigures } from './capacity-tally.ts';
import { login } from './identity-scenarios.ts';
import { markdownTable } from './markdown-table.ts';
import { percentile } from './percentile.ts';

/**
 * The controller's share of a new connection (issue 37, goal 5): a router asks for a circuit for an SDK's Dial
 * (CreateCircuitV2Request, the SDK's session and API session tokens), the controller checks the session, picks the
 * terminator, sends the Route, and, once the router answers it, answers the circuit. Measured through the control
 * channel of the controller `npm start` runs, with a scripted router (`test/support/ctrl-router.ts`) that answers each
 * Route at once, so what is timed is the controller's own work and its table reads; a real router and SDK add their
 * own (the end-to-end figures: 123 ms median here and 5.8 ms against the reference controller, connect to first
 * echoed byte, 30 connections one after another). Each circuit is faulted after its answer, as an SDK closing it, and ended before the next dial.
 */

/** Dials measured, one after another, as the 30 connections; a few first dials warm the process up. */
const DIALS = 30;
const WARM_UP_DIALS = 5;
const EDGE_PUBLIC_KEY = 1003;

export interface DialFigures {
  readonly dials: number;
  /** CreateCircuitV2Request sent → Route received: the session check, the terminator choice, the circuit's ids. */
  readonly toRouteMs: readonly number[];
  /** RouteResult sent → CreateCircuitV2Response received: the circuit answered (it is stored after). */
  readonly afterRouteMs: readonly number[];
  /** The whole dial, less the scripted router's own (instant) answer. */
  readonly totalMs: readonly number[];
  /** DynamoDB requests a dial sent, by operation, on average. */
  readonly requestsPerDial: ReadonlyMap<string, number>;
  /** Request units a dial took, on average, by AWS's rules (the table and its indexes): what DynamoDB bills. */
  readonly unitsPerDial: { readonly read: number; readonly write: number };
}

export async function dialBench(options: SessionBenchOptions): Promise<DialFigures> {
  const bench = await startBenchController('bench-dial', options, undefined, undefined, true);
  const call = (method: string, path: string, request?: RequestOptions) =>
    httpsCall(bench.origin, options.tls.cert, method, path, request);
  // What the test support's router and network need of a controller: its address, its certificate, its API.
  const controller = { server: bench.server, rootCertPem: options.tls.cert, call, deps: bench.deps };
  const asController = () => controller as unknown as TestController;
  let router: RouterEnd | undefined;
  try {
    const token = await login(bench.client, options.adminUsername, options.adminPassword);
    const admin = (method: string, path: string, body?: unknown) =>
      call(method, `/edge/management/v1${path}`, { token, ...(body === undefined ? {} : { body }) });
    const enrolled = await enrolledEdgeRouter(asController, admin, 'bench-dial-router');
    const network = await edgeNetwork(asController, admin, enrolled.id);
    router = await dialCtrl(asController(), enrolled.credentials, { answerHeartbeats: true });
    await router.hello(enrolled.id);
    const scripted = scriptedRouter(router);
    await scripted.bind(await network.host.session('Bind'), network.host.apiSessionToken);
    const dial = await network.dialer.session('Dial');
    const headers = new Map<number, Buffer>([
      [11, Buffer.from(dial.token)],
      [14, Buffer.from(network.dialer.apiSessionToken)],
      [13, Buffer.alloc(0)],
      // The dialing SDK's public key (services require end-to-end encryption by default).
      [10, uint32BytesMapHeader(new Map([[EDGE_PUBLIC_KEY, Buffer.from('dialer-key')]]))],
    ]);
    for (let i = 0; i < WARM_UP_DIALS; i++) await scripted.dial(headers);
    const toRouteMs: number[] = [];
    const afterRouteMs: number[] = [];
    const requests = new Map<string, number>();
    await bench.meter.settle();
    const unitsBefore = totalUnits(bench.meter.dynamo.capacity());
    for (let i = 0; i < DIALS; i++) {
      const before = bench.meter.read().requests;
      const timed = await scripted.dial(headers);
      for (const [operation, count] of bench.meter.read().requests) {
        const sent = count - (before.get(operation) ?? 0);
        if (sent > 0) requests.set(operation, (requests.get(operation) ?? 0) + sent);
      }
      toRouteMs.push(timed.toRouteMs);
      afterRouteMs.push(timed.afterRouteMs);
    }
    await bench.meter.settle();
    const unitsAfter = totalUnits(bench.meter.dynamo.capacity());
    return {
      unitsPerDial: {
        read: (unitsAfter.read - unitsBefore.read) / DIALS,
        write: (unitsAfter.write - unitsBefore.write) / DIALS,
      },
      dials: DIALS,
      toRouteMs,
      afterRouteMs,
      totalMs: toRouteMs.map((ms, index) => ms + afterRouteMs[index]!),
      requestsPerDial: new Map([...requests].map(([operation, count]) => [operation, count / DIALS])),
    };
  } finally {
    router?.socket.destroy();
    await bench.close();
  }
}

/** The router's side of hosting and dialing, as the reference router sends it, answering each Route at once. */
function scriptedRouter(router: RouterEnd) {
  let sequence = 10_000;
  /** The next message of a type, passing over the rest (the edge hello, API sessions, the data model, unroutes). */
  const next = async (contentType: number): Promise<ChannelMessage> => {
    for (;;) {
      const message = await router.next(10_000);
      if (message.contentType === contentType) return message;
      // A refusal answers the request instead of the Route the dial waits for.
      if (message.contentType === ContentType.error) {
        throw new Error(`the bench's dial was refused: ${message.body.toString()}`);
      }
    }
  };
  return {
    async bind(session: { token: string }, apiSessionToken: string): Promise<void> {
      router.send({
        contentType: ContentType.createTerminatorV2Request,
        sequence: ++sequence,
        body: encodeBody('edge.CreateTerminatorV2Request', {
          address: 'bench-hosted',
          sessionToken: session.token,
          apiSessionToken,
          peerData: { [EDGE_PUBLIC_KEY]: Buffer.from('host-key') },
        }),
      });
      const answer = await next(ContentType.createTerminatorV2Response);
      const { result } = decodeBody<{ result: string }>('edge.CreateTerminatorV2Response', answer.body);
      if (result !== 'Success') throw new Error(`the bench's terminator was refused: ${result}`);
    },
    async dial(headers: ReadonlyMap<number, Buffer>): Promise<{ toRouteMs: number; afterRouteMs: number }> {
      const asked = performance.now();
      router.send({ contentType: ContentType.createCircuitV2Request, sequence: ++sequence, headers });
      const routeMessage = await next(ContentType.route);
      const routed = performance.now();
      const route = decodeBody<Route>('ctrl.Route', routeMessage.body);
      router.send({
        contentType: ContentType.routeResult,
        sequence: ++sequence,
        headers: new Map([
          [Header.replyFor, int32Header(routeMessage.sequence)],
          [1101, uint32Header(route.attempt)],
          [1102, boolHeader(true)],
          [EDGE_PUBLIC_KEY, Buffer.from('host-key')],
        ]),
        body: Buffer.from(route.circuitId),
      });
      const answered = performance.now();
      const response = await next(ContentType.createCircuitV2Response);
      const done = performance.now();
      if (response.headers.has(1014)) throw new Error(`the bench's dial was refused: ${response.body.toString()}`);
      // The SDK closes the connection: the circuit ends, as its router's fault says.
      router.send({
        contentType: ContentType.fault,
        sequence: ++sequence,
        body: encodeBody('ctrl.Fault', { subject: 'IngressFault', id: route.circuitId }),
      });
      // Its Unroute comes once the circuit's item is deleted: the next dial's reads are its own.
      await next(ContentType.unroute);
      return { toRouteMs: routed - asked, afterRouteMs: done - answered };
    },
  };
}

const ms = (value: number) => value.toFixed(1);

/** Every read and write unit so far, the table's and its indexes' together. */
function totalUnits(capacity: CapacityFigures): { read: number; write: number } {
  const sum = (units: ReadonlyMap<string, number>) => [...units.values()].reduce((total, value) => total + value, 0);
  return { read: sum(capacity.read), write: sum(capacity.write) };
}

const dollarsPerMillion = (units: { read: number; write: number }) =>
  units.read * AWS_PRICES.dynamoDb.readRequestUnit + units.write * AWS_PRICES.dynamoDb.writeRequestUnit;

export function dialReport(figures: DialFigures): string {
  const row = (label: string, samples: readonly number[]) => [
    label,
    ms(percentile(samples, 0.5)),
    ms(percentile(samples, 0.9)),
    ms(Math.max(...samples)),
  ];
  const requests = [...figures.requestsPerDial]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([operation, count]) => `${operation} ${count.toFixed(1)}`)
    .join(', ');
  return [
    `## A dial: the controller's share of a new connection (${figures.dials} dials, one after another)`,
    '',
    markdownTable(
      ['', 'median ms', 'p90 ms', 'max ms'],
      [
        row('request → Route (session check, terminator, ids)', figures.toRouteMs),
        row('RouteResult → answer (stored after)', figures.afterRouteMs),
        row('whole dial, less the router', figures.totalMs),
      ],
      [false, true, true, true],
    ),
    '',
    `DynamoDB requests a dial: ${requests || 'none'} (the endpoint's own polls and lease renewals of the same ` +
      `seconds included). Request units a dial: ${figures.unitsPerDial.read.toFixed(1)} read, ` +
      `${figures.unitsPerDial.write.toFixed(1)} write: $${dollarsPerMillion(figures.unitsPerDial).toFixed(2)} a million ` +
      `dials on DynamoDB on demand (${AWS_PRICES.region}, prices of ${AWS_PRICES.asOf}); the endpoint's tasks are a ` +
      'fixed cost (docs/costs.md). End to end through a reference router and the C SDK: docs/performance.md, "A dial".',
  ].join('\n');
}
