import { beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import {
  boolHeader,
  type ChannelMessage,
  ContentType,
  Header,
  int32Header,
  replyForOf,
  stringSliceHeader,
  uint32BytesMapHeader,
  uint32Header,
} from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerTerminators } from '#ctrl-channel/terminators.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { onlineEdgeRouter, type Route, type RouterEnd } from '../support/ctrl-router.ts';
import { recordSent } from '../support/dynamodb-recorder.ts';
import { edgeNetwork } from '../support/edge-network.ts';

// The endpoint keeps which routers an identity may use for a service in memory (`ctrl-channel/dial-cache.ts`): a
// change that takes access away must still refuse the next dial within the change log's few seconds, well inside the
// cache's maximum age (30 s), so these prove the notices drop it.
const TIMINGS = { heartbeatIntervalMs: 200, unresponsiveTimeoutMs: 2_000, replyTimeoutMs: 300, routeTimeoutMs: 400 };
const { controller, call } = useAdminController(
  {},
  { ctrlTimings: TIMINGS, ctrlFeatures: [routerInterfaces, routerTerminators, circuits] },
);

const PUBLIC_KEY = 1003;
/** Well within the cache's maximum age: the change log's poll (1 s) and its read, with room for a loaded machine. */
const REFUSED_WITHIN_MS = 10_000;

let routerId: string;
let router: RouterEnd;
let sequence = 100;

beforeAll(async () => {
  ({ id: routerId, end: router } = await onlineEdgeRouter(controller, call, 'dial-cache-router'));
});

type Network = Awaited<ReturnType<typeof edgeNetwork>>;

/** The next message of a type, skipping the router's others (interfaces' answers). */
async function nextOf(...types: number[]): Promise<ChannelMessage> {
  for (;;) {
    const message = await router.next(5_000);
    if (types.includes(message.contentType)) return message;
  }
}

/** A network whose host has bound its service through the router. */
async function boundNetwork(): Promise<Network> {
  const network = await edgeNetwork(controller, call, routerId);
  const bind = await network.host.session('Bind');
  const seq = ++sequence;
  router.send({
    contentType: ContentType.createTerminatorV2Request,
    sequence: seq,
    body: encodeBody('edge.CreateTerminatorV2Request', {
      address: `hosted-${seq}`,
      sessionToken: bind.token,
      apiSessionToken: network.host.apiSessionToken,
      peerData: { [PUBLIC_KEY]: Buffer.from('host-key') },
    }),
  });
  const answer = await nextOf(ContentType.createTerminatorV2Response);
  expect(replyForOf(answer)).toBe(seq);
  return network;
}

/**
 * The router asks for a circuit with this Dial session; a Route is answered as set up and the circuit ended again.
 * 'made', or the refusal's error code.
 */
async function dial(network: Network, token: string): Promise<'made' | number | undefined> {
  const answered = await dialUntilAnswered(network, token);
  if (typeof answered !== 'string') return answered.refused;
  await endCircuit(answered);
  return 'made';
}

/** The dial up to the controller's answer: the circuit's id, or the refusal's error code. */
async function dialUntilAnswered(network: Network, token: string): Promise<string | { refused: number | undefined }> {
  const seq = ++sequence;
  router.send({
    contentType: ContentType.createCircuitV2Request,
    sequence: seq,
    headers: new Map([
      [11, Buffer.from(token)],
      [14, Buffer.from(network.dialer.apiSessionToken)],
      [12, stringSliceHeader(['0123456789abcdef0123456789abcdef01234567'])],
      [13, Buffer.alloc(0)],
      [10, uint32BytesMapHeader(new Map([[PUBLIC_KEY, Buffer.from('dialer-key')]]))],
    ]),
  });
  const first = await nextOf(ContentType.route, ContentType.error);
  if (first.contentType === ContentType.error) {
    expect(replyForOf(first)).toBe(seq);
    return { refused: first.headers.get(1014)?.readUInt32LE(0) };
  }
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
  return route.circuitId;
}

/** The SDK closes its connection: the router's fault ends the circuit, and the controller unroutes it. */
async function endCircuit(circuitId: string): Promise<void> {
  router.send({
    contentType: ContentType.fault,
    sequence: ++sequence,
    body: encodeBody('ctrl.Fault', { subject: 'IngressFault', id: circuitId }),
  });
  await nextOf(ContentType.unroute);
}

/**
 * The table requests a dial sends between the router's request and the controller's answer, less the circuit's item
 * (written after the answer) and the endpoint's own background (its change log poll, routers' presence and leases),
 * which runs on its own clock whatever the dials.
 */
async function dialRequests(network: Network, token: string): Promise<string[]> {
  const background = /SESSIONCHANGES#|ctrl-channels|CTRL#|ENDPOINT#/;
  // The circuit's own item, which the endpoint writes once it has answered (`circuit-writes.ts`), as its PutItem.
  const storedAfter = (command: { command: string; input: Readonly<Record<string, unknown>> }) =>
    command.command === 'PutItemCommand' && JSON.stringify(command.input).includes('"PK":"CIRCUIT#');
  let answered: Awaited<ReturnType<typeof dialUntilAnswered>> = { refused: undefined };
  const sent = await recordSent(controller().deps.store.db, async () => {
    answered = await dialUntilAnswered(network, token);
  });
  if (typeof answered !== 'string') throw new Error(`the dial was refused: ${answered.refused}`);
  await endCircuit(answered);
  return sent
    .filter((command) => !background.test(JSON.stringify(command.input)) && !storedAfter(command))
    .map((command) => `${command.command} ${JSON.stringify(command.input).slice(0, 200)}`);
}

/** Dials until refused (the notice reached the endpoint) or the time is up: the refusal's code and when it came. */
async function refusedWithin(
  network: Network,
  token: string,
): Promise<{ result: 'made' | number | undefined; ms: number }> {
  const start = Date.now();
  let result = await dial(network, token);
  while (result === 'made' && Date.now() - start < REFUSED_WITHIN_MS) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    result = await dial(network, token);
  }
  return { result, ms: Date.now() - start };
}

/** The id of the policy of a collection whose role field names the network's tag (edge-network's policies). */
async function policyOf(collection: string, field: string, role: string): Promise<string> {
  const listed = await call('GET', `/${collection}?limit=500`);
  const policy = (listed.body.data as { id: string; [field: string]: unknown }[]).find((p) =>
    (p[field] as string[]).includes(role),
  );
  if (!policy) throw new Error(`no ${collection} naming ${role}`);
  return policy.id;
}

describe('a dial answered from memory', () => {
  it('sends no table request between the router asking and its answer once its reads are kept', async () => {
    const network = await boundNetwork();
    const session = await network.dialer.session('Dial');
    // The first dial reads and keeps; the change log's poll then passes the writes of the set-up (the notices of the
    // network's policies, which would drop what was kept).
    expect(await dial(network, session.token)).toBe('made');
    await controller().ctrl.changesRead();
    expect(await dial(network, session.token)).toBe('made');
    expect(await dialRequests(network, session.token)).toEqual([]);
  });
});

describe('dials answered from memory still refuse what a change took away', () => {
  it('refuses within seconds once the edge router policy letting the identity use the router is deleted', async () => {
    const network = await boundNetwork();
    const session = await network.dialer.session('Dial');
    expect(await dial(network, session.token)).toBe('made');
    expect(await dial(network, session.token)).toBe('made');

    const policyId = await policyOf('edge-router-policies', 'identityRoles', `#${network.tag}-dialers`);
    expect((await call('DELETE', `/edge-router-policies/${policyId}`)).status).toBe(200);

    const { result, ms } = await refusedWithin(network, session.token);
    expect(result).toBe(5);
    expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
  });

  it('refuses within seconds once the service edge router policy putting the service on the router is deleted', async () => {
    const network = await boundNetwork();
    const session = await network.dialer.session('Dial');
    expect(await dial(network, session.token)).toBe('made');

    const policyId = await policyOf('service-edge-router-policies', 'serviceRoles', `#${network.tag}-svc`);
    expect((await call('DELETE', `/service-edge-router-policies/${policyId}`)).status).toBe(200);

    const { result, ms } = await refusedWithin(network, session.token);
    expect(result).toBe(5);
    expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
  });

  it('refuses within seconds once the router loses the role attribute the policies select it by', async () => {
    const network = await boundNetwork();
    const session = await network.dialer.session('Dial');
    expect(await dial(network, session.token)).toBe('made');

    const stored = await call('GET', `/edge-routers/${routerId}`);
    const roles = (stored.body.data.roleAttributes as string[]).filter((role) => role !== `${network.tag}-er`);
    expect((await call('PATCH', `/edge-routers/${routerId}`, { roleAttributes: roles })).status).toBe(200);

    const { result, ms } = await refusedWithin(network, session.token);
    expect(result).toBe(5);
    expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
  });

  it('refuses a deleted Dial session, and a disabled identity’s dial', async () => {
    const network = await boundNetwork();
    const deleted = await network.dialer.session('Dial');
    expect(await dial(network, deleted.token)).toBe('made');
    expect(await dial(network, deleted.token)).toBe('made');
    expect((await call('DELETE', `/sessions/${deleted.id}`)).status).toBe(200);
    const gone = await refusedWithin(network, deleted.token);
    expect(gone.result).toBe(3);
    expect(gone.ms).toBeLessThan(REFUSED_WITHIN_MS);

    const session = await network.dialer.session('Dial');
    expect(await dial(network, session.token)).toBe('made');
    expect(
      (await call('POST', `/identities/${network.dialer.identityId}/disable`, { durationMinutes: 0 })).status,
    ).toBe(200);
    const { result } = await refusedWithin(network, session.token);
    expect(result).toBe(2);
  });

  it('refuses within seconds once the service is deleted', async () => {
    const network = await boundNetwork();
    const session = await network.dialer.session('Dial');
    expect(await dial(network, session.token)).toBe('made');
    expect(await dial(network, session.token)).toBe('made');
    expect((await call('DELETE', `/services/${network.serviceId}`)).status).toBe(200);
    const { result, ms } = await refusedWithin(network, session.token);
    // The service gone: its terminators went with it, or the session check finds no service.
    expect(result).not.toBe('made');
    expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
  });

  it('follows a change of the service the check keeps: its role attribute gone, the router is refused within seconds', async () => {
    const network = await boundNetwork();
    const session = await network.dialer.session('Dial');
    expect(await dial(network, session.token)).toBe('made');
    expect(await dial(network, session.token)).toBe('made');
    // The service edge router policy selects the service by this attribute: the policy lookup must see the service
    // as it is now, not as the session check kept it (the `services` notice drops both).
    const patched = await call('PATCH', `/services/${network.serviceId}`, { roleAttributes: [] });
    expect(patched.status).toBe(200);
    const { result, ms } = await refusedWithin(network, session.token);
    expect(result).toBe(5);
    expect(ms).toBeLessThan(REFUSED_WITHIN_MS);
  });

  it('refuses a revoked API session’s dial', async () => {
    const network = await boundNetwork();
    const session = await network.dialer.session('Dial');
    expect(await dial(network, session.token)).toBe('made');
    expect((await call('DELETE', `/api-sessions/${network.dialer.apiSessionId}`)).status).toBe(200);
    const { result } = await refusedWithin(network, session.token);
    expect(result).toBe(2);
  });

  // Last: it moves the controller's clock (and back).
  it('refuses the dial of an API session idle past the timeout, though its check is in memory', async () => {
    const network = await boundNetwork();
    const session = await network.dialer.session('Dial');
    expect(await dial(network, session.token)).toBe('made');
    const timeoutMs = controller().deps.config.apiSessionTimeoutMinutes * 60_000;
    controller().advanceClock(timeoutMs + 60_000);
    try {
      expect(await dial(network, session.token)).toBe(2);
    } finally {
      controller().advanceClock(-(timeoutMs + 60_000));
    }
  });
});
