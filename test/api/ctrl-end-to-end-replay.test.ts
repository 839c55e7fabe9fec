import { createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { messageOfRecord, type RecordedFrame } from '#ctrl-channel/frame-recorder.ts';
import {
  type ChannelMessage,
  CircuitRequestHeader,
  CircuitResponseHeader,
  ContentType,
  EdgeHeader,
  Header,
  int32Header,
  replyForOf,
  stringMapOf,
  uint32BytesMapHeader,
  uint32BytesMapOf,
} from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { type Credentials, dialCtrl, enrolledEdgeRouter, type Route, type RouterEnd } from '../support/ctrl-router.ts';
import { edgeNetwork } from '../support/edge-network.ts';

/**
 * The router's side of the first end-to-end run (test/data/ctrl-channel/end-to-end-v2.0.0-pre12.jsonl, its README
 * says how it was made): the reference router carried a C SDK's connection to another C SDK hosting an
 * encryption-required service. CI has no router, nor SDKs: the router's frames are sent again, in their order and
 * with their sequences, by a router enrolled here, bound to this test's network (its id, its SDKs' fresh tokens, the
 * controller's own sequences and circuit id), and the controller's side is checked by its shape against the recording.
 */
const RECORDING = join(import.meta.dirname, '../data/ctrl-channel/end-to-end-v2.0.0-pre12.jsonl');

const recorded = readFileSync(RECORDING, 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as RecordedFrame);
const recordedOut = recorded.filter((frame) => frame.direction === 'out');
const recordedIn = recorded.filter((frame) => frame.direction === 'in');

interface TerminatorRequest {
  address: string;
  sessionToken: string;
  apiSessionToken: string;
  peerData: Record<string, Buffer>;
}
interface Fault {
  subject: string;
  id: string;
  iteration: number;
}
interface PublicKey {
  data: Buffer;
  kid: string;
  usages: string[];
  format: string;
}
interface DataState {
  events: { publicKey?: PublicKey; identity?: { id: string }; service?: object }[];
  endIndex: number;
  timelineId: string;
}
interface EdgeListener {
  advertise: { protocol: string; hostname: string; port: number };
}

const onlyOf = (contentType: number) => recorded.filter((frame) => frame.contentType === contentType);
const bodyOf = (frame: RecordedFrame) => Buffer.from(frame.bodyHex, 'hex');
const recordedRoute = decodeBody<Route>('ctrl.Route', bodyOf(onlyOf(ContentType.route)[0]!));
const recordedTerminator = decodeBody<TerminatorRequest>(
  'edge.CreateTerminatorV2Request',
  bodyOf(onlyOf(ContentType.createTerminatorV2Request)[0]!),
);
const recordedClientHello = decodeBody<{ hostname: string; listeners: EdgeListener[] }>(
  'edge.ClientHello',
  bodyOf(onlyOf(ContentType.clientHello)[0]!),
);
const recordedCircuitRequest = onlyOf(ContentType.createCircuitV2Request)[0]!;
const recordedCircuitResponse = onlyOf(ContentType.createCircuitV2Response)[0]!;
const recordedHeaderLength = (frame: RecordedFrame, id: number) => frame.headers.find((h) => h.id === id)?.length;

/**
 * The dialer's peer data (the CreateCircuitV2Request's header 10). The recorder took header 10 for the hello's group
 * secret on every message and kept only its length, so it is rebuilt from the Route the controller made of it (its
 * egress carries the dialer's peer data): the first test checks that it is all of it, the recorded length.
 */
const dialerPeerData = new Map(Object.entries(recordedRoute.egress.peerData).map(([key, value]) => [+key, value]));

/**
 * What the controller's replies to the router's requests were in the recording (the ClientHello's ServerHello is no
 * reply): their content types and the sequence of the request each answers. The router's sequences are replayed as
 * recorded, so a run must answer the same.
 */
const isReply = (frame: RecordedFrame) => frame.replyFor !== undefined && frame.replyFor !== -1;
const recordedReplies = recordedOut
  .filter(isReply)
  .map((frame) => ({ contentType: frame.contentType, replyFor: frame.replyFor! }));

/**
 * The controller's replies the router had received before it sent a frame (those recorded since its previous frame):
 * the replay waits for them too, as the router acted on them (its SDK dialed once the host's terminator was there).
 */
const repliesBefore = (frame: RecordedFrame) => {
  const at = recorded.indexOf(frame);
  const previous = recorded.findLastIndex((other, index) => index < at && other.direction === 'in');
  return recorded.slice(previous + 1, at).filter(isReply);
};

/** The controller's messages as they come, to wait for one by what it is, whatever came before it. */
class Inbox {
  readonly received: ChannelMessage[] = [];
  private readonly end: RouterEnd;
  constructor(end: RouterEnd) {
    this.end = end;
  }

  /** Reads the controller's messages until `found` finds what it looks for among all so far (at most `timeoutMs`). */
  async until<T>(what: string, found: (received: readonly ChannelMessage[]) => T | undefined, timeoutMs = 10_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = found(this.received);
      if (result !== undefined) return result;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} from the controller within ${timeoutMs} ms`);
      try {
        this.received.push(await this.end.next(left));
      } catch (error) {
        throw new Error(`no ${what} from the controller within ${timeoutMs} ms (${(error as Error).message})`);
      }
    }
  }

  /** The `ordinal`th message (from 0) of a content type the controller sent. */
  nth(contentType: number, ordinal = 0, timeoutMs?: number): Promise<ChannelMessage> {
    const what = `message ${contentType} #${ordinal}`;
    return this.until(what, (received) => ofType(received, contentType)[ordinal], timeoutMs);
  }

  /** The controller's reply of a content type to the router's message of sequence `sequence`. */
  replyTo(contentType: number, sequence: number): Promise<ChannelMessage> {
    return this.until(`reply ${contentType} to ${sequence}`, (received) =>
      ofType(received, contentType).find((message) => replyForOf(message) === sequence),
    );
  }
}

const ofType = (received: readonly ChannelMessage[], contentType: number) =>
  received.filter((message) => message.contentType === contentType);

const { controller, call } = useAdminController();
let router: { id: string; credentials: Credentials };
let network: Awaited<ReturnType<typeof edgeNetwork>>;

beforeAll(async () => {
  router = await enrolledEdgeRouter(controller, call, 'replayed-end-to-end-router');
  // The run's network: a service that requires end-to-end encryption, a host that may Bind it and a dialer that may
  // Dial it, both through the router.
  network = await edgeNetwork(controller, call, router.id, { encryptionRequired: true });
});

describe("the reference router's recorded end-to-end run, replayed", () => {
  it('is what the recording says: a hosted service dialed through the router, its circuit ended by faults', () => {
    expect(recordedIn.map((frame) => frame.contentType).filter((type) => type !== ContentType.heartbeat)).toEqual([
      ContentType.hello,
      ContentType.routerLinks,
      ContentType.subscribeToDataModelRequest,
      ContentType.clientHello,
      ContentType.updateRouterInterfaces,
      ContentType.connectEvents,
      ContentType.createTerminatorV2Request,
      ContentType.connectEvents,
      ContentType.connectEvents,
      ContentType.connectEvents,
      ContentType.createCircuitV2Request,
      ContentType.routeResult,
      ContentType.fault,
      ContentType.fault,
    ]);
    expect(recordedReplies).toEqual([
      { contentType: ContentType.result, replyFor: 4 },
      { contentType: ContentType.createTerminatorV2Response, replyFor: 7 },
      { contentType: ContentType.createCircuitV2Response, replyFor: 14 },
    ]);
    // The rebuilt peer data of the dial is all the recorded header held: the dialer's key and four more entries.
    expect(uint32BytesMapHeader(dialerPeerData).length).toBe(
      recordedHeaderLength(recordedCircuitRequest, CircuitRequestHeader.peerData),
    );
    expect(dialerPeerData.get(EdgeHeader.publicKey)).toHaveLength(32);
    // The host bound with its key; the route went to its terminator; the router's result and faults name the circuit.
    expect(recordedTerminator.peerData[EdgeHeader.publicKey]).toHaveLength(32);
    expect(recordedRoute.egress.destination).toBe(recordedTerminator.address);
    expect(bodyOf(onlyOf(ContentType.routeResult)[0]!).toString()).toBe(recordedRoute.circuitId);
    for (const fault of onlyOf(ContentType.fault))
      expect(decodeBody<Fault>('ctrl.Fault', bodyOf(fault)).id).toBe(recordedRoute.circuitId);
  });

  it("answers the router's frames as it answered the real router: edge hello, sync, data model, terminator, circuit, its end", async () => {
    const bind = await network.host.session('Bind');
    const dial = await network.dialer.session('Dial');
    // The controller's heartbeats are answered as a live router does; the router's own are replayed as recorded.
    const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true, answerServerHello: false });
    const inbox = new Inbox(end);
    /** The recording's circuit id and this run's, once the controller's Route named its own. */
    const circuitIds = new Map<string, string>();

    /**
     * The recorded message bound to this run: what answers a message of the controller answers this run's (the
     * recorded sequence's message of the same type and rank), and the SDKs' tokens and the circuit are this run's.
     */
    async function boundToRun(frame: RecordedFrame): Promise<ChannelMessage> {
      const recordedHeaders = frame.headers.filter((header) => header.hex !== undefined);
      const message = messageOfRecord({ ...frame, headers: recordedHeaders });
      const headers = new Map(message.headers);
      let body = message.body;
      const answered = frame.replyFor === undefined ? undefined : await answeredInRun(frame.replyFor);
      if (answered) headers.set(Header.replyFor, int32Header(answered.sequence));
      switch (frame.contentType) {
        case ContentType.hello:
          body = Buffer.from(router.id);
          break;
        case ContentType.createTerminatorV2Request: {
          const request = decodeBody<TerminatorRequest>('edge.CreateTerminatorV2Request', body);
          const bound = { ...request, sessionToken: bind.token, apiSessionToken: network.host.apiSessionToken };
          body = encodeBody('edge.CreateTerminatorV2Request', bound);
          break;
        }
        case ContentType.createCircuitV2Request:
          headers.set(CircuitRequestHeader.peerData, uint32BytesMapHeader(dialerPeerData));
          headers.set(CircuitRequestHeader.sessionToken, Buffer.from(dial.token));
          headers.set(CircuitRequestHeader.apiSessionToken, Buffer.from(network.dialer.apiSessionToken));
          break;
        case ContentType.routeResult: {
          const { circuitId } = decodeBody<Route>('ctrl.Route', answered!.body);
          circuitIds.set(body.toString(), circuitId);
          body = Buffer.from(circuitId);
          break;
        }
        case ContentType.fault: {
          const fault = decodeBody<Fault>('ctrl.Fault', body);
          const id = fault.id
            .split(' ')
            .map((circuitId) => circuitIds.get(circuitId) ?? circuitId)
            .join(' ');
          body = encodeBody('ctrl.Fault', { ...fault, id });
          break;
        }
      }
      // Every recorded header is sent (the one the recorder left out rebuilt), none added.
      expect(headers.size).toBe(frame.headers.length);
      return { ...message, headers, body };
    }

    /** This run's message of the controller that the recorded one of sequence `sequence` stands for. */
    async function answeredInRun(sequence: number): Promise<ChannelMessage | undefined> {
      if (sequence === -1) return undefined;
      const answered = recordedOut.find((frame) => frame.sequence === sequence)!;
      const rank = recordedOut.filter((frame) => frame.contentType === answered.contentType).indexOf(answered);
      return inbox.nth(answered.contentType, rank);
    }

    const [hello, ...frames] = recordedIn;
    const helloAnswer = await end.hello(router.id, (await boundToRun(hello!)).headers);
    expect(helloAnswer.contentType).toBe(ContentType.result);
    expect(helloAnswer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));

    let circuitChecked = false;
    for (const frame of frames) {
      for (const reply of repliesBefore(frame)) await inbox.replyTo(reply.contentType, reply.replyFor!);
      if (frame.contentType === ContentType.fault && !circuitChecked) {
        // The circuit was answered; the router ends it once the SDKs are done: while it lives, its path is shown.
        circuitChecked = true;
        await controller().ctrl.circuitsStored();
        expect((await call('GET', `/sessions/${dial.id}/route-path`)).body.data).toEqual({ routePath: [router.id] });
      }
      end.send(await boundToRun(frame));
    }

    // The edge hello, as recorded: instant sync and the router data model.
    const serverHello = await inbox.nth(ContentType.serverHello);
    const recordedServerHello = onlyOf(ContentType.serverHello)[0]!;
    expect(serverHello.headers.get(Header.routerDataModel)).toEqual(Buffer.from([1]));
    expect(decodeBody('edge.ServerHello', serverHello.body)).toEqual(
      decodeBody('edge.ServerHello', bodyOf(recordedServerHello)),
    );

    // Each of the router's requests answered as in the recording, its heartbeats too.
    for (const { contentType, replyFor } of recordedReplies) await inbox.replyTo(contentType, replyFor);
    const interfacesReport = onlyOf(ContentType.updateRouterInterfaces)[0]!;
    expect(
      (await inbox.replyTo(ContentType.result, interfacesReport.sequence)).headers.get(Header.resultSuccess),
      'the interfaces report succeeded',
    ).toEqual(Buffer.from([1]));
    const beats = frames.flatMap((frame) => {
      const beat = frame.headers.find((header) => header.id === Header.heartbeat);
      return beat ? [Buffer.from(beat.hex!, 'hex')] : [];
    });
    const answeredBeats = await inbox.until('answer to each heartbeat', (received) => {
      const answers = received.flatMap((message) => message.headers.get(Header.heartbeatResponse) ?? []);
      return answers.length >= beats.length ? answers : undefined;
    });
    expect(answeredBeats).toEqual(beats);

    // The data model: the full state under the router's subscription, with the key the session JWTs verify with, the
    // SDKs' identities, and every kind of event the recorded state had.
    const subscription = decodeBody<{ subscriptionId: string }>(
      'edge.SubscribeToDataModelRequest',
      bodyOf(onlyOf(ContentType.subscribeToDataModelRequest)[0]!),
    );
    const dataState = await inbox.nth(ContentType.dataState);
    expect(dataState.headers.get(Header.routerDataModelSubscriptionId)?.toString()).toBe(subscription.subscriptionId);
    const state = decodeBody<DataState>('edge.DataState', dataState.body);
    const kinds = (events: DataState['events']) =>
      new Set(
        events.map((event) =>
          event.publicKey ? `publicKey ${event.publicKey.usages}` : event.identity ? 'identity' : 'service',
        ),
      );
    const recordedState = decodeBody<DataState>('edge.DataState', bodyOf(onlyOf(ContentType.dataState)[0]!));
    expect([...kinds(state.events)]).toEqual(expect.arrayContaining([...kinds(recordedState.events)]));
    const identities = state.events.flatMap((event) => event.identity?.id ?? []);
    expect(identities).toEqual(expect.arrayContaining([network.host.identityId, network.dialer.identityId]));
    const { kid } = decodeProtectedHeader(dial.token);
    const jwtKey = state.events.find((event) => event.publicKey?.usages.includes('JWTValidation'))?.publicKey;
    expect(jwtKey).toMatchObject({ kid, format: 'PKIXPublicKey' });
    const verificationKey = createPublicKey({ key: jwtKey!.data, format: 'der', type: 'spki' });
    const { payload } = await jwtVerify(dial.token, verificationKey, { audience: 'openziti' });
    expect(payload).toMatchObject({ jti: dial.id, z_st: 'Dial', z_iid: network.dialer.identityId });

    // The API session sync: a full state first, as recorded; the host's and the dialer's sessions with their tokens.
    const firstSync = await inbox.nth(ContentType.apiSessionAdded);
    expect(firstSync.headers.get(Header.syncStrategyType)?.toString()).toBe('instant');
    expect(JSON.parse(firstSync.headers.get(Header.syncStrategyState)!.toString())).toEqual({
      id: expect.any(String),
      isLast: true,
      sequence: 0,
    });
    const synced = await inbox.until('the SDKs’ API sessions', (received) => {
      const sessions = ofType(received, ContentType.apiSessionAdded).flatMap(
        (message) =>
          decodeBody<{ apiSessions: { token: string; id: string; identityId: string }[] }>(
            'edge.ApiSessionAdded',
            message.body,
          ).apiSessions,
      );
      const ids = [network.host.apiSessionId, network.dialer.apiSessionId];
      return ids.every((id) => sessions.some((session) => session.id === id)) ? sessions : undefined;
    });
    for (const sdk of [network.host, network.dialer]) {
      expect(synced).toContainEqual(
        expect.objectContaining({ id: sdk.apiSessionId, identityId: sdk.identityId, token: sdk.apiSessionToken }),
      );
    }

    // The host's terminator: created under the id the router chose, shown on the router.
    const terminatorRequest = onlyOf(ContentType.createTerminatorV2Request)[0]!;
    const created = await inbox.replyTo(ContentType.createTerminatorV2Response, terminatorRequest.sequence);
    expect(decodeBody('edge.CreateTerminatorV2Response', created.body)).toEqual(
      decodeBody('edge.CreateTerminatorV2Response', bodyOf(onlyOf(ContentType.createTerminatorV2Response)[0]!)),
    );
    expect(decodeBody('edge.CreateTerminatorV2Response', created.body)).toMatchObject({
      terminatorId: recordedTerminator.address,
      result: 'Success',
    });
    const terminators = await call('GET', '/terminators');
    expect(terminators.body.data).toContainEqual(
      expect.objectContaining({
        id: recordedTerminator.address,
        address: recordedTerminator.address,
        binding: 'edge',
        routerId: router.id,
        serviceId: network.serviceId,
      }),
    );

    // The route: egress to the host's terminator with the dialer's peer data, a forward each way, the circuit's tags.
    const routeMessage = await inbox.nth(ContentType.route);
    const route = decodeBody<Route>('ctrl.Route', routeMessage.body);
    expect(route).toMatchObject({
      attempt: 0,
      egress: { binding: 'edge', destination: recordedTerminator.address, peerData: recordedRoute.egress.peerData },
      tags: { serviceId: network.serviceId, clientId: network.dialer.identityId, hostId: network.host.identityId },
    });
    expect(Object.keys(route.tags).sort()).toEqual(Object.keys(recordedRoute.tags).sort());
    expect(route.circuitId).toMatch(/^[0-9a-f-]{36}$/);
    expect(route.timeout).toBeGreaterThan(0);
    const [toEgress, toIngress] = route.forwards;
    expect(route.forwards).toHaveLength(recordedRoute.forwards.length);
    expect(toEgress).toEqual({ srcAddress: expect.any(String), dstAddress: route.egress.address, dstType: 'End' });
    expect(toIngress).toEqual({ srcAddress: route.egress.address, dstAddress: toEgress!.srcAddress, dstType: 'Start' });

    // The circuit: its id, the ingress address (the route's start), the host's key as the dialer's peer data, the tags.
    const response = await inbox.replyTo(ContentType.createCircuitV2Response, recordedCircuitRequest.sequence);
    expect(response.headers.get(CircuitResponseHeader.circuitId)?.toString()).toBe(route.circuitId);
    expect(response.headers.get(CircuitResponseHeader.address)?.toString()).toBe(toIngress!.dstAddress);
    expect(uint32BytesMapOf(response, CircuitResponseHeader.peerData)).toEqual(
      new Map([[EdgeHeader.publicKey, recordedTerminator.peerData[EdgeHeader.publicKey]]]),
    );
    expect(response.headers.get(CircuitResponseHeader.peerData)).toHaveLength(
      recordedHeaderLength(recordedCircuitResponse, CircuitResponseHeader.peerData)!,
    );
    expect(Object.fromEntries(stringMapOf(response, CircuitResponseHeader.tags))).toEqual(route.tags);

    // Its end: the first fault unroutes it (not at once), the second changes nothing; no path is left.
    const unroute = await inbox.nth(ContentType.unroute);
    expect(decodeBody('ctrl.Unroute', unroute.body)).toEqual({ circuitId: route.circuitId, now: false });
    await expect(inbox.nth(ContentType.unroute, 1, 500), 'a second Unroute').rejects.toThrow(/within 500 ms/);
    expect((await call('GET', `/sessions/${dial.id}/route-path`)).body.data).toEqual({ routePath: [] });

    // The router as the management API shows it: online, synced, dialable at the listeners its ClientHello reported.
    const advertised = Object.fromEntries(
      recordedClientHello.listeners.map(({ advertise }) => [
        advertise.protocol,
        `${advertise.protocol}://${advertise.hostname}:${advertise.port}`,
      ]),
    );
    const shown = await until(async () => {
      const { body } = await call('GET', `/edge-routers/${router.id}`);
      return body.data.syncStatus === 'SYNC_DONE' ? body.data : undefined;
    });
    expect(shown).toMatchObject({
      isOnline: true,
      syncStatus: 'SYNC_DONE',
      hostname: recordedClientHello.hostname,
      supportedProtocols: advertised,
      version: 'v2.0.0-pre12',
    });
    end.socket.destroy();
  });
});

/** Polls until `found` finds something, for at most 10 s. */
async function until<T>(found: () => Promise<T | undefined>): Promise<T | undefined> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const result = await found();
    if (result !== undefined || Date.now() > deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
