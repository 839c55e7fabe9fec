import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { messageOfRecord, type RecordedFrame } from '#ctrl-channel/frame-recorder.ts';
import { type ChannelMessage, ContentType, Header, replyForOf } from '#ctrl-channel/message.ts';
import { decodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { decodeVersionInfo } from '#ctrl-channel/version-info.ts';
import { sessionJwtVerificationKey } from '#shared/pki/session-jwt.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, dialCtrl, enrolledEdgeRouter } from '../support/ctrl-router.ts';

/**
 * The real router's side of a recorded control channel (test/data/ctrl-channel, made against `npm start` with
 * `CTRL_CHANNEL_RECORD`; its README says how), replayed against the controller by a router enrolled here: CI has no
 * router, so what the reference router sent is sent again and the controller's answers are checked by their shape.
 */
const RECORDING = join(import.meta.dirname, '../data/ctrl-channel/router-v2.0.0-pre12.jsonl');

const recorded = readFileSync(RECORDING, 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as RecordedFrame);
const fromRouter = recorded.filter((frame) => frame.direction === 'in').map(messageOfRecord);
const recordedHello = fromRouter[0]!;
const recordedRouterId = recordedHello.body.toString('utf8');
/** The controller's replies to the router's requests in the recording (not to the hello): what a run must answer. */
const recordedReplies = recorded
  .filter((frame) => frame.direction === 'out' && frame.replyFor !== undefined && frame.replyFor !== -1)
  .map((frame) => ({
    replyFor: frame.replyFor!,
    contentType: frame.contentType,
    success: frame.headers.find((header) => header.id === Header.resultSuccess)?.decoded === true,
  }));

/** The router's data model subscriptions in the recording: each is answered with a DataState. */
const recordedSubscriptions = fromRouter
  .filter((message) => message.contentType === ContentType.subscribeToDataModelRequest)
  .map((message) =>
    decodeBody<{ subscriptionId: string; renew: boolean }>('edge.SubscribeToDataModelRequest', message.body),
  );

/** The recorded message with the recorded router's id replaced by the router of this test (ids are equally long). */
function boundTo(routerId: string, message: ChannelMessage): ChannelMessage {
  const swap = (value: Buffer) =>
    Buffer.from(value.toString('latin1').replaceAll(recordedRouterId, routerId), 'latin1');
  return {
    ...message,
    headers: new Map([...message.headers].map(([id, value]) => [id, swap(value)])),
    body: swap(message.body),
  };
}

const { controller, call } = useAdminController();
let router: { id: string; credentials: Credentials };

beforeAll(async () => {
  router = await enrolledEdgeRouter(controller, call, 'replayed-router');
  // The router's id is in its certificate: the recording's is swapped for it, which needs the same length.
  expect(router.id).toHaveLength(recordedRouterId.length);
});

describe("the reference router's recorded control channel, replayed", () => {
  it('is what the recording says: a v2.0.0-pre12 hello, then heartbeats and what the router sends after it', () => {
    expect(recordedHello.contentType).toBe(ContentType.hello);
    expect(decodeVersionInfo(recordedHello.headers.get(Header.helloVersion))?.version).toBe('v2.0.0-pre12');
    expect(fromRouter.filter((message) => message.headers.has(Header.heartbeat)).length).toBeGreaterThanOrEqual(2);
    // The router subscribes to the data model right after it connects, once (it renews after five minutes).
    expect(recordedSubscriptions).toHaveLength(1);
    expect(recordedSubscriptions[0]).toMatchObject({ renew: false, subscriptionId: expect.stringMatching(/./) });
    expect(recordedReplies).toContainEqual({
      replyFor: expect.any(Number),
      contentType: ContentType.result,
      success: true,
    });
  });

  it("accepts the router's hello as the reference does, answers each of its heartbeats, and keeps it online", async () => {
    // The router's frames are what it recorded: nothing answers the controller's ServerHello but what it sent.
    const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true, answerServerHello: false });
    const [hello, ...rest] = fromRouter.map((message) => boundTo(router.id, message));

    const answer = await end.hello(router.id, hello!.headers);

    expect(answer.contentType).toBe(ContentType.result);
    expect(replyForOf(answer)).toBe(hello!.sequence);
    expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
    const version = decodeVersionInfo(answer.headers.get(Header.helloVersion));
    expect(version?.version).toMatch(/^v2\.\d+\.\d+$/);
    const capabilities = answer.headers.get(Header.capabilities)!;
    expect(capabilities[capabilities.length - 1]! & 0x40).toBe(0x40);
    expect(answer.headers.get(Header.id)?.length).toBeGreaterThan(0);

    for (const message of rest) end.send(message);
    const beats = rest.flatMap((message) => message.headers.get(Header.heartbeat) ?? []);
    const answered: Buffer[] = [];
    const replies: { replyFor: number; contentType: number; success: boolean }[] = [];
    const dataStates: ChannelMessage[] = [];
    const serverHellos: ChannelMessage[] = [];
    while (
      answered.length < beats.length ||
      replies.length < recordedReplies.length ||
      dataStates.length < recordedSubscriptions.length ||
      serverHellos.length === 0
    ) {
      const received = await end.next();
      if (received.contentType === ContentType.dataState) dataStates.push(received);
      if (received.contentType === ContentType.serverHello) serverHellos.push(received);
      const response = received.headers.get(Header.heartbeatResponse);
      if (response) answered.push(response);
      const replyFor = replyForOf(received);
      if (replyFor !== undefined) {
        const success = received.headers.get(Header.resultSuccess)?.[0] === 1;
        replies.push({ replyFor, contentType: received.contentType, success });
      }
    }

    expect(answered).toEqual(beats);
    // The router's requests (its interfaces report) are answered as they were when it ran against the controller.
    expect(replies).toEqual(recordedReplies);
    // Its data model subscription is answered with a full state under its subscription id, holding the key its Dial
    // and Bind session JWTs verify with.
    const sessionKey = await sessionJwtVerificationKey(controller().deps.signers.server);
    expect(dataStates.map((message) => message.headers.get(Header.routerDataModelSubscriptionId)?.toString())).toEqual(
      recordedSubscriptions.map((subscription) => subscription.subscriptionId),
    );
    for (const message of dataStates) {
      const state = decodeBody<{ events: { publicKey?: object }[]; endIndex: number; timelineId: string }>(
        'edge.DataState',
        message.body,
      );
      expect(state.endIndex).toBeGreaterThanOrEqual(1);
      expect(state.timelineId).not.toBe('');
      expect(state.events.map((event) => event.publicKey)).toContainEqual({
        data: Buffer.from(sessionKey.der),
        kid: sessionKey.kid,
        usages: ['JWTValidation'],
        format: 'PKIXPublicKey',
      });
    }
    // The edge hello, which the recording's controller did not send yet (so the router's ClientHello is not in it).
    expect(serverHellos).toHaveLength(1);
    const { body } = await call('GET', `/edge-routers/${router.id}`);
    expect(body.data).toMatchObject({ isOnline: true, version: 'v2.0.0-pre12', os: 'linux', arch: 'amd64' });
    expect(controller().ctrl.connected(router.id)).toBeDefined();
    end.socket.destroy();
  });
});
