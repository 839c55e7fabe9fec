import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { type ChannelMessage, ContentType, replyForOf } from '#ctrl-channel/message.ts';
import { encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, dialCtrl, enrolledEdgeRouter, type RouterEnd } from '../support/ctrl-router.ts';
import { refuseRequests } from '../support/dynamodb-faults.ts';

const { controller, call } = useAdminController();

type Line = Record<string, unknown>;

/** What an HTTP request's lines carry and no line about a router may: its ids, its caller, its Lambda context. */
const REQUEST_FIELDS = [
  'requestId',
  'identityId',
  'function_request_id',
  'function_name',
  'function_arn',
  'function_memory_size',
  'cold_start',
  'xray_trace_id',
];

let counter = 0;
const unique = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`;

let flooder: { id: string; credentials: Credentials };
let bystander: { id: string; credentials: Credentials };
let chatty: { id: string; credentials: Credentials };

beforeAll(async () => {
  flooder = await enrolledEdgeRouter(controller, call, unique('logs-flooder'));
  bystander = await enrolledEdgeRouter(controller, call, unique('logs-bystander'));
  chatty = await enrolledEdgeRouter(controller, call, unique('logs-chatty'));
});

/** A router's channel, hello accepted, heartbeats answered. */
async function connected(router: { id: string; credentials: Credentials }): Promise<RouterEnd> {
  const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true });
  await end.hello(router.id);
  return end;
}

/** The controller's log lines from index `from` on, parsed. */
const linesSince = (from: number): Line[] =>
  controller()
    .logLines.slice(from)
    .map((line) => JSON.parse(line) as Line);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves when the controller closes the router's connection, fails when it has not within `ms`. */
async function closedWithin(end: RouterEnd, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the controller kept the channel open for ${ms} ms`)), ms);
  });
  try {
    await Promise.race([end.closed, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The next message of `contentType` the controller sends (others are skipped). */
async function nextOf(end: RouterEnd, contentType: number): Promise<ChannelMessage> {
  for (;;) {
    const message = await end.next();
    if (message.contentType === contentType) return message;
  }
}

/** Field 1 as a length-delimited value longer than the body: no protobuf message decodes from it. */
const TRUNCATED = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
/** A string slice header claiming more entries than it holds. */
const HOSTILE_COUNT = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/**
 * Frames of the content types the controller handles, well formed as frames, whose bodies or headers are garbage: a
 * terminator's create, update and removal, a fault, a circuit confirmation, a data model subscription, a resync
 * request, a circuit request (its fingerprints a hostile count, no session token) and a route result.
 */
function garbageFrame(index: number): { contentType: number; headers?: Map<number, Buffer>; body?: Buffer } {
  const bodies = [
    ContentType.createTerminatorV2Request,
    ContentType.edgeUpdateTerminatorRequest,
    ContentType.removeTerminatorsRequest,
    ContentType.fault,
    ContentType.circuitConfirmation,
    ContentType.subscribeToDataModelRequest,
    ContentType.requestClientReSync,
  ];
  const kind = index % (bodies.length + 2);
  if (kind < bodies.length) return { contentType: bodies[kind]!, body: TRUNCATED };
  if (kind === bodies.length)
    return { contentType: ContentType.createCircuitV2Request, headers: new Map([[12, HOSTILE_COUNT]]) };
  return { contentType: ContentType.routeResult, body: Buffer.from(`garbage-${index}`) };
}

describe("a router's control channel lines", () => {
  it('name the router, its connection and the endpoint; a few malformed messages are each logged in full and dropped, the channel kept', async () => {
    const from = controller().logLines.length;
    const end = await connected(chatty);

    // A reference router sends none; a version disagreeing on a field might send a few.
    for (const contentType of [
      ContentType.fault,
      ContentType.subscribeToDataModelRequest,
      ContentType.createTerminatorV2Request,
    ]) {
      end.send({ contentType, sequence: 10 + contentType, body: TRUNCATED });
    }
    end.send({ contentType: ContentType.updateRouterInterfaces, sequence: 7, body: Buffer.alloc(0) });
    const answer = await nextOf(end, ContentType.result);
    await sleep(200);

    expect(replyForOf(answer)).toBe(7);
    const connection = controller().ctrl.connected(chatty.id);
    expect(connection?.channel.closeReason).toBeUndefined();
    const routerLines = linesSince(from).filter((line) => line.routerId === chatty.id);
    const malformed = routerLines.filter((line) => line.message === 'ctrl channel refused a malformed message');
    expect(malformed.map((line) => line.contentType)).toEqual([
      ContentType.fault,
      ContentType.subscribeToDataModelRequest,
      ContentType.createTerminatorV2Request,
    ]);
    for (const line of malformed)
      expect(line).toMatchObject({ level: 'WARN', detail: expect.stringMatching(/malformed/) });
    expect(routerLines.some((line) => line.message === 'ctrl channel opened')).toBe(true);
    for (const line of routerLines) {
      expect(line).toMatchObject({ routerId: chatty.id, connectionId: connection?.connectionId });
      expect(line.endpointId).toEqual(expect.any(String));
    }
    end.socket.destroy();
  });

  it('never carry the context of the HTTP requests run before them or beside them', async () => {
    const before = controller().logLines.length;
    expect((await call('GET', '/edge-routers')).status).toBe(200);
    const from = controller().logLines.length;
    // The request's own lines carry its context: there is a context to leak.
    expect(linesSince(before)).toContainEqual(
      expect.objectContaining({ requestId: expect.any(String), function_request_id: expect.any(String) }),
    );

    const end = await connected(chatty);
    const [listed, answer] = await Promise.all([
      call('GET', '/edge-routers'),
      (async () => {
        end.send({ contentType: ContentType.fault, sequence: 20, body: TRUNCATED });
        end.send({ contentType: ContentType.updateRouterInterfaces, sequence: 21, body: Buffer.alloc(0) });
        return nextOf(end, ContentType.result);
      })(),
    ]);
    await sleep(200);

    expect(listed.status).toBe(200);
    expect(replyForOf(answer)).toBe(21);
    const routerLines = linesSince(from).filter((line) => line.routerId === chatty.id);
    expect(routerLines.map((line) => line.message)).toEqual(
      expect.arrayContaining(['ctrl channel opened', 'ctrl channel refused a malformed message']),
    );
    for (const line of routerLines) {
      for (const field of REQUEST_FIELDS) expect(line, `${line.message} carries ${field}`).not.toHaveProperty(field);
    }
    end.socket.destroy();
  });

  it('are bounded for 4,000 garbage frames of handled types, after which the controller closes the channel; the controller and another router keep working', async () => {
    const other = await connected(bystander);
    const end = await connected(flooder);
    const from = controller().logLines.length;

    for (let index = 0; index < 4_000; index++) end.send({ ...garbageFrame(index), sequence: 100 + index });
    await closedWithin(end, 10_000);
    // What was already being handled when the channel closed has finished.
    await sleep(500);

    // The other router is told (debug) that the flooder went offline: its peer's state, not the flood's lines. Its own
    // connection's lines (its edge hello's answer) may still come on a loaded machine: none is the flood's.
    const seen = linesSince(from).filter((line) => line.message !== 'ctrl channel sent peer states');
    const lines = seen.filter((line) => line.routerId === flooder.id);
    const others = seen.filter((line) => line.routerId !== flooder.id);
    expect(lines.length, lines.map((line) => line.message).join('\n')).toBeLessThanOrEqual(20);
    const notTheBystanders = others.filter(
      (line) => line.routerId !== bystander.id || /malformed|refused/.test(String(line.message)),
    );
    expect(notTheBystanders, JSON.stringify(others)).toEqual([]);
    const closed = lines.find((line) => line.message === 'ctrl channel closed');
    expect(closed?.reason).toMatch(/malformed messages/);
    expect(lines.some((line) => line.message === 'ctrl channel refused a malformed message')).toBe(true);
    expect(controller().ctrl.connected(flooder.id)).toBeUndefined();

    // The other router's channel still answers, and so does the API.
    other.send({ contentType: ContentType.updateRouterInterfaces, sequence: 9, body: Buffer.alloc(0) });
    expect(replyForOf(await nextOf(other, ContentType.result))).toBe(9);
    expect(controller().ctrl.connected(bystander.id)?.channel.closeReason).toBeUndefined();
    expect((await call('GET', `/edge-routers/${bystander.id}`)).body.data.isOnline).toBe(true);
    other.socket.destroy();
  });

  it("bound the controller's own failures too (a table refusing reads while a router keeps asking), never closing the channel for them", async () => {
    const end = await connected(chatty);
    // Its API sessions sent first: a full sync whose reads fail closes the channel, by design.
    await nextOf(end, ContentType.apiSessionAdded);
    await sleep(200);
    const subscriptions = 200;
    const reads = refuseRequests(controller().deps.store.db, (command) =>
      ['GetItemCommand', 'QueryCommand', 'BatchGetItemCommand', 'GetCommand', 'BatchGetCommand'].includes(command),
    );
    onTestFinished(reads.stop);
    const from = controller().logLines.length;

    for (let index = 0; index < subscriptions; index++) {
      end.send({
        contentType: ContentType.subscribeToDataModelRequest,
        sequence: 1_000 + index,
        body: encodeBody('edge.SubscribeToDataModelRequest', { subscriptionId: `sub-${index}` }),
      });
    }
    for (let tries = 0; tries < 100 && reads.refused < subscriptions; tries++) await sleep(50);
    await sleep(200);
    // The endpoint's own lines (its poll of the API session changes fails too) are no router's.
    const whileOpen = linesSince(from).filter((line) => line.routerId === chatty.id);
    expect(controller().ctrl.connected(chatty.id)?.channel.closeReason).toBeUndefined();
    reads.stop();
    end.socket.destroy();
    await end.closed;
    await sleep(200);

    const lines = linesSince(from).filter((line) => line.routerId === chatty.id);
    expect(whileOpen.length).toBeLessThanOrEqual(10);
    const notSent = lines.filter((line) => line.message === 'router data model not sent');
    const summary = lines.find((line) => line.message === 'ctrl channel lines summarised');
    const summarised = (summary?.summarised as { event: string; count: number }[] | undefined) ?? [];
    const held = summarised.find((entry) => entry.event === 'router data model not sent')?.count ?? 0;
    expect(notSent.length).toBeGreaterThan(0);
    expect(notSent.length + held).toBe(subscriptions);
    expect(lines.find((line) => line.message === 'ctrl channel closed')?.reason).not.toMatch(/malformed/);
  });
});

describe('the summary', () => {
  it('names what was held back by event and content type', async () => {
    const end = await connected(chatty);
    const from = controller().logLines.length;

    for (let index = 0; index < 6; index++) {
      end.send({ contentType: ContentType.fault, sequence: 2_000 + index, body: TRUNCATED });
    }
    await sleep(300);
    expect(controller().ctrl.connected(chatty.id)?.channel.closeReason).toBeUndefined();
    end.socket.destroy();
    await end.closed;
    await sleep(200);

    const lines = linesSince(from).filter((line) => line.routerId === chatty.id);
    expect(lines.filter((line) => line.message === 'ctrl channel refused a malformed message')).toHaveLength(3);
    expect(lines.find((line) => line.message === 'ctrl channel lines summarised')).toMatchObject({
      level: 'WARN',
      summarised: [{ event: 'ctrl channel refused a malformed message', contentType: ContentType.fault, count: 3 }],
    });
  });
});
