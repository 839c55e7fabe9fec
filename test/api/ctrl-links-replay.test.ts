import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import { messageOfRecord, type RecordedFrame } from '#ctrl-channel/frame-recorder.ts';
import { linkVerification } from '#ctrl-channel/link-verify.ts';
import { links } from '#ctrl-channel/links.ts';
import { type ChannelMessage, ContentType, Header, replyForOf } from '#ctrl-channel/message.ts';
import { peerStates } from '#ctrl-channel/peer-state.ts';
import { decodeBody, encodeBody, encodedElementsOf } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerRevocation } from '#ctrl-channel/router-revocation.ts';
import { type LinkRecord, readLink } from '#shared/store/link-items.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  dialCtrl,
  enrolledRouter,
  fingerprintOfCredentials,
  type RouterEnd,
} from '../support/ctrl-router.ts';

/**
 * The links run of three reference routers (test/data/ctrl-channel/links-v2.0.0-pre12/, its README says how it was
 * made): r2, a transit router listening for links (groups west and east), and r1 and r3, edge routers dialing with
 * groups west and east; r1→r2 and r3→r2 linked, r2 was stopped (both links faulted), then started again (both linked
 * anew at a higher iteration). CI has no router: the routers' frames of the fabric are sent again, merged in the
 * order they were recorded, by three routers enrolled here (their ids, and the fingerprints their link dialers
 * present, this test's), and the controller's side is checked against the recording: the peer states each was told
 * (r2's link listeners byte for byte as its hello carried them), the VerifyRouter answers, and the link graph as the
 * table keeps it through the stop and the restart. The edge's messages (the data model subscription, the
 * ClientHello, connect events) are left out: the edge features are not bound here.
 */
const DIRECTORY = join(import.meta.dirname, '../data/ctrl-channel/links-v2.0.0-pre12');

interface Connection {
  /** When its connection was accepted (epoch ms, from the file's name). */
  readonly startedAt: number;
  readonly frames: readonly RecordedFrame[];
  /** The recorded router's id (its hello's body). */
  readonly routerId: string;
}

const connections: Connection[] = readdirSync(DIRECTORY)
  .filter((name) => name.endsWith('.jsonl'))
  .sort()
  .map((name) => {
    const [, date, hh, mm, ss, ms] = /^(\d{4}-\d\d-\d\d)T(\d\d)-(\d\d)-(\d\d)-(\d{3})Z/.exec(name)!;
    const frames = readFileSync(join(DIRECTORY, name), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as RecordedFrame);
    return {
      startedAt: Date.parse(`${date}T${hh}:${mm}:${ss}.${ms}Z`),
      frames,
      routerId: Buffer.from(frames[0]!.bodyHex, 'hex').toString(),
    };
  });

/** The router listening for links: its hello carries link listeners (header 1000). */
const listens = (connection: Connection) => connection.frames[0]!.headers.some((h) => h.id === Header.listeners);
const transitId = connections.find(listens)!.routerId;
const dialerIds = [...new Set(connections.filter((c) => !listens(c)).map((c) => c.routerId))];
const bodyOf = (frame: RecordedFrame) => Buffer.from(frame.bodyHex, 'hex');

/** The messages of the fabric a router sends, replayed; the edge's are not (no edge feature is bound here). */
const REPLAYED: ReadonlySet<number> = new Set([
  ContentType.hello,
  ContentType.heartbeat,
  ContentType.routerLinks,
  ContentType.verifyRouter,
  ContentType.linkState,
  ContentType.metrics,
  ContentType.fault,
  ContentType.updateRouterInterfaces,
]);

interface Link {
  id: string;
  destRouterId: string;
  iteration: number;
}
interface PeerChange {
  id: string;
  state: string;
  listeners: Buffer[];
}

/** Every PeerStateChange of these messages, each listener as its bytes. */
function peerChangesOf(messages: readonly { contentType: number; body: Buffer }[]): PeerChange[] {
  return messages
    .filter((message) => message.contentType === ContentType.peerStateChanges)
    .flatMap((message) => encodedElementsOf('ctrl.PeerStateChanges', 'changes', message.body, 1_000).elements)
    .map((raw) => ({
      ...decodeBody<PeerChange>('ctrl.PeerStateChange', raw),
      listeners: encodedElementsOf('ctrl.PeerStateChange', 'listeners', raw, 16).elements,
    }))
    .map(({ id, state, listeners }) => ({ id, state, listeners }));
}

const recordedOut = (connection: Connection) =>
  connection.frames
    .filter((frame) => frame.direction === 'out')
    .map((frame) => ({ contentType: frame.contentType, body: bodyOf(frame) }));
const recordedIn = (contentType: number) =>
  connections.flatMap((connection) =>
    connection.frames.filter((frame) => frame.direction === 'in' && frame.contentType === contentType),
  );

/** The links the dialers reported, in recorded order (the first time, and after the restart). */
const reportedLinks = connections
  .flatMap((connection) =>
    connection.frames
      .filter((frame) => frame.direction === 'in' && frame.contentType === ContentType.routerLinks)
      .map((frame) => ({ at: connection.startedAt + frame.atMs, frame })),
  )
  .sort((a, b) => a.at - b.at)
  .flatMap(({ frame }) => decodeBody<{ links: Link[] }>('ctrl.RouterLinks', bodyOf(frame)).links);

const { controller, call } = useAdminController(
  {},
  { ctrlFeatures: [routerRevocation, routerInterfaces, linkVerification, peerStates, links, circuits] },
);

/** The recorded routers' ids → the routers enrolled here that stand for them. */
const routers = new Map<string, { id: string; credentials: Credentials }>();
const here = (recordedId: string) => routers.get(recordedId)?.id ?? recordedId;

beforeAll(async () => {
  routers.set(transitId, await enrolledRouter(controller, call, 'replayed-r2', 'transit-routers'));
  for (const [index, id] of dialerIds.entries()) {
    routers.set(id, await enrolledRouter(controller, call, `replayed-dialer-${index}`, 'edge-routers'));
  }
});

/** A router's end of one replayed connection, keeping all the controller sent it. */
class Replayed {
  readonly received: ChannelMessage[] = [];
  readonly end: RouterEnd;
  constructor(end: RouterEnd) {
    this.end = end;
  }

  /** Reads what comes within `ms` of quiet, and what had come and was not read yet (also once the socket closed). */
  async drain(ms = 500): Promise<void> {
    for (;;) {
      try {
        this.received.push(await this.end.next(ms));
      } catch {
        return;
      }
    }
  }

  /** Reads until `found` holds of what came so far (at most 10 s). */
  async until(what: string, found: (received: readonly ChannelMessage[]) => boolean): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!found(this.received)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} from the controller within 10 s`);
      try {
        this.received.push(await this.end.next(left));
      } catch {
        // Read again until the deadline.
      }
    }
  }
}

/** Polls until `check` holds, for at most 10 s. */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Polls the table until `check` holds of a link (at most 10 s); the link as last read. */
async function linkWhen(id: string, check: (link: LinkRecord | undefined) => boolean) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const link = await readLink(controller().deps.store, id);
    if (check(link) || Date.now() > deadline) return link;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("three reference routers' recorded links run, replayed", () => {
  it('is what the recording says: two dialers linked to r2, faulted when it stopped, linked again after', () => {
    expect(connections.map((connection) => connection.routerId)).toEqual([
      transitId,
      dialerIds[0],
      dialerIds[1],
      transitId,
    ]);
    expect(dialerIds).toHaveLength(2);
    expect(reportedLinks.map((link) => [link.destRouterId, link.iteration])).toEqual([
      [transitId, 1],
      [transitId, 1],
      [transitId, 4],
      [transitId, 4],
    ]);
    // Each dialer faulted its link once, when r2 stopped; r2 verified each dialer on each of its connections.
    const faults = recordedIn(ContentType.fault).map((frame) => decodeBody<Link>('ctrl.Fault', bodyOf(frame)));
    expect(faults.map((fault) => fault.id).sort()).toEqual([...new Set(reportedLinks.map((link) => link.id))].sort());
    const verified = recordedIn(ContentType.verifyRouter).map(
      (frame) => decodeBody<{ routerId: string }>('ctrl.VerifyRouter', bodyOf(frame)).routerId,
    );
    expect(verified.sort()).toEqual([...dialerIds, ...dialerIds].sort());
  });

  it("answers the routers' frames as it answered the real ones: peer states, verifications, the link graph", async () => {
    // Every router frame to replay, merged in recorded order, and when each connection ends (r2's first: stopped).
    const events = connections
      .flatMap((connection, index) =>
        connection.frames
          .filter((frame) => frame.direction === 'in' && REPLAYED.has(frame.contentType))
          .map((frame) => ({ at: connection.startedAt + frame.atMs, index, frame })),
      )
      .sort((a, b) => a.at - b.at);
    const ends = connections.map(() => undefined as Replayed | undefined);
    const [firstR2, restartedR2] = [0, connections.length - 1];
    const lastOfFirstR2 = events.findLast((event) => event.index === firstR2)!;
    const recordedLatency = new Map<string, number>();

    for (const event of events) {
      const connection = connections[event.index]!;
      const router = routers.get(connection.routerId)!;
      const { frame } = event;
      const message = messageOfRecord(frame);
      let body = message.body;
      if (frame.contentType === ContentType.hello && event.index === restartedR2) {
        // r2 stopped: each dialer faulted its link, and the links are gone, before r2 comes back.
        for (const { id } of reportedLinks) {
          expect(await linkWhen(id, (found) => found === undefined), `link ${id} after r2 stopped`).toBeUndefined();
        }
      }
      if (frame.contentType === ContentType.hello) {
        const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true });
        const answer = await end.hello(router.id, message.headers);
        expect(answer.headers.get(Header.resultSuccess), 'hello accepted').toEqual(Buffer.from([1]));
        ends[event.index] = new Replayed(end);
        continue;
      }
      const replayed = ends[event.index]!;
      switch (frame.contentType) {
        case ContentType.verifyRouter: {
          const { routerId, fingerprints } = decodeBody<{ routerId: string; fingerprints: string[] }>(
            'ctrl.VerifyRouter',
            body,
          );
          // The dialer's certificate is this test's: its fingerprint first, then the recorded CA's.
          const dialer = routers.get(routerId)!;
          body = encodeBody('ctrl.VerifyRouter', {
            routerId: dialer.id,
            fingerprints: [fingerprintOfCredentials(dialer.credentials), ...fingerprints.slice(1)],
          });
          break;
        }
        case ContentType.routerLinks: {
          const report = decodeBody<{ links: Link[]; fullRefresh: boolean }>('ctrl.RouterLinks', body);
          const bound = report.links.map((link) => ({ ...link, destRouterId: here(link.destRouterId) }));
          body = encodeBody('ctrl.RouterLinks', { ...report, links: bound });
          break;
        }
        case ContentType.metrics: {
          const metrics = decodeBody<{ histograms: Record<string, { mean: number }> }>('metrics.MetricsMessage', body);
          for (const { id } of reportedLinks) {
            const latency = metrics.histograms[`link.${id}.latency`]?.mean;
            const queue = metrics.histograms[`link.${id}.queue_time`]?.mean ?? 0;
            const end = connection.routerId === transitId ? 'dest' : 'source';
            if (latency === undefined) continue;
            recordedLatency.set(`${id} ${end}`, Math.trunc(latency + queue));
            // The router measured a link it held, seconds after it was reported: the replay, sending at once, waits
            // until the link is known (another router's report of it may still be being applied).
            await until(() => controller().ctrl.linkGraph.link(id) !== undefined);
          }
          break;
        }
      }
      replayed.end.send({ ...message, body });
      if (event === lastOfFirstR2) {
        // Before r2 stops: both links as the dialers reported and measured them, r2 online to them.
        await checkLinked(1, recordedLatency);
        replayed.end.socket.destroy();
        for (const dialerId of dialerIds) {
          const dialer = ends[connections.findIndex((c) => c.routerId === dialerId)]!;
          await dialer.until('r2 Unhealthy', (received) =>
            peerChangesOf(received).some((change) => change.id === here(transitId) && change.state === 'Unhealthy'),
          );
        }
      }
    }

    // The dialers' faults removed both links when r2 stopped; after its restart, both were reported anew.
    await checkLinked(4, recordedLatency);

    // What each router was told of its peers, as the real routers were: r2's link listeners byte for byte.
    for (const replayed of ends) await replayed?.drain();
    for (const [index, connection] of connections.entries()) {
      const told = peerChangesOf(ends[index]!.received);
      const recorded = peerChangesOf(recordedOut(connection)).map((change) => ({ ...change, id: here(change.id) }));
      const ids = (changes: PeerChange[]) => new Set(changes.map((change) => change.id));
      expect(ids(told), `${index}: the peers it was told of`).toEqual(ids(recorded));
      for (const change of recorded) {
        const last = told.findLast((each) => each.id === change.id && each.state === change.state);
        expect(last, `${index}: ${change.id} ${change.state}`).toEqual(change);
      }
    }
    // r2's link listener as its hello carried it (the recorded header, replayed) is what the dialers were told.
    const listener = encodedElementsOf(
      'ctrl.Listeners',
      'listeners',
      Buffer.from(connections[0]!.frames[0]!.headers.find((h) => h.id === Header.listeners)!.hex!, 'hex'),
      16,
    ).elements;
    const toDialer = peerChangesOf(ends[1]!.received).find((change) => change.state === 'Healthy');
    expect(toDialer?.listeners).toEqual(listener);

    // Every VerifyRouter answered as the real controller answered it: verified.
    for (const [index, connection] of connections.entries()) {
      const asked = connection.frames.filter((frame) => frame.contentType === ContentType.verifyRouter);
      for (const request of asked) {
        const answer = ends[index]!.received.find(
          (message) => message.contentType === ContentType.result && replyForOf(message) === request.sequence,
        );
        const recorded = connection.frames.find(
          (frame) => frame.direction === 'out' && frame.replyFor === request.sequence,
        );
        expect(answer?.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
        expect(answer?.body.toString()).toBe(bodyOf(recorded!).toString());
      }
    }
    for (const replayed of ends) replayed?.end.socket.destroy();
  });
});

/**
 * Waits until both links are in the table at `iteration`, from each dialer to r2, with the connections their last
 * LinkState reported and the latencies their Metrics (and r2's) measured, as far as the replay has sent them.
 */
async function checkLinked(iteration: number, measured: ReadonlyMap<string, number>): Promise<void> {
  for (const reported of reportedLinks.filter((link) => link.iteration === iteration)) {
    const latencies = {
      sourceLatency: measured.get(`${reported.id} source`),
      destLatency: measured.get(`${reported.id} dest`),
    };
    const link = await linkWhen(
      reported.id,
      (found) =>
        found?.iteration === iteration &&
        found.sourceLatency === latencies.sourceLatency &&
        found.destLatency === latencies.destLatency,
    );
    expect(link, `link ${reported.id} at iteration ${iteration}`).toMatchObject({
      iteration,
      destRouterId: here(transitId),
      state: 'Connected',
      ...latencies,
    });
    expect(link!.connections.length, 'its underlay connections').toBeGreaterThan(0);
    expect(dialerIds.map(here)).toContain(link!.sourceRouterId);
  }
}
