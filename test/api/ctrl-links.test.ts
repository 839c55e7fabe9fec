import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { circuits } from '#ctrl-channel/circuits.ts';
import { LATENCY_WRITE_INTERVAL_MS } from '#ctrl-channel/link-reports.ts';
import { links } from '#ctrl-channel/links.ts';
import { type ChannelMessage, ContentType, Header } from '#ctrl-channel/message.ts';
import { peerStates } from '#ctrl-channel/peer-state.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { routerInterfaces } from '#ctrl-channel/router-interfaces.ts';
import { routerRevocation } from '#ctrl-channel/router-revocation.ts';
import {
  INITIAL_LINK_LATENCY_NS,
  type LinkRecord,
  linkCostOf,
  readLink,
  readLinks,
  reportLink,
} from '#shared/store/link-items.ts';
import { putRouterConnection, renewRouterLease } from '#shared/store/router-connections.ts';
import { useAdminController } from '../support/admin-controller.ts';
import {
  type Credentials,
  dialCtrl,
  enrolledRouter,
  fingerprintOfCredentials,
  type RouterEnd,
  routerConnectionOf,
} from '../support/ctrl-router.ts';
import { type SecondEndpoint, startSecondEndpoint } from '../support/second-endpoint.ts';

/**
 * The link graph (issue 37): what routers report of the links they dialed (RouterLinks, LinkState, Metrics, link
 * faults), kept in the table (`link-items.ts`) and in each endpoint's memory (`link-graph.ts`). Scripted routers on
 * the test controller's endpoint and on a second endpoint process on the same table.
 */
const features = [routerRevocation, routerInterfaces, peerStates, links, circuits];
/** Every router's connection read again every 2 s (10 s outside tests), so a lapsed lease is seen soon. */
const PRESENCE_REFRESH_MS = 2_000;
const { controller, call } = useAdminController(
  {},
  { ctrlFeatures: features, ctrlPresenceRefreshMs: PRESENCE_REFRESH_MS },
);

let second: SecondEndpoint;
beforeAll(async () => {
  second = await startSecondEndpoint(controller(), { features, presenceRefreshMs: PRESENCE_REFRESH_MS });
});
afterAll(async () => {
  await second?.close();
});

let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;
let linkIds = 0;
const newLinkId = () => `link-${++linkIds}-${Date.now().toString(36)}`;

/** A router's end, reading what the controller sends it. */
class Router {
  readonly received: ChannelMessage[] = [];
  private sequence = 10;
  readonly id: string;
  readonly end: RouterEnd;
  constructor(id: string, end: RouterEnd) {
    this.id = id;
    this.end = end;
  }

  send(contentType: number, body: Buffer): void {
    this.end.send({ contentType, sequence: this.sequence++, body });
  }

  /** Reports links it dialed, as the reference router does (RouterLinks). */
  reportLinks(reported: readonly ReportedLink[], fullRefresh = false): void {
    this.send(
      ContentType.routerLinks,
      encodeBody('ctrl.RouterLinks', {
        fullRefresh,
        links: reported.map((link) => ({
          id: link.id,
          destRouterId: link.to,
          linkProtocol: 'tls',
          dialAddress: `tls:${link.to}.links.test:13102`,
          iteration: link.iteration ?? 1,
          connState: { stateIteration: 1, conns: [{ type: 'link.default', localAddr: 'a:1', remoteAddr: 'b:2' }] },
        })),
      }),
    );
  }

  fault(subject: 'LinkFault' | 'LinkDuplicate', id: string, iteration: number): void {
    this.send(ContentType.fault, encodeBody('ctrl.Fault', { subject, id, iteration }));
  }

  metrics(histograms: Record<string, number>): void {
    this.send(
      ContentType.metrics,
      encodeBody('metrics.MetricsMessage', {
        sourceId: this.id,
        histograms: Object.fromEntries(Object.entries(histograms).map(([name, mean]) => [name, { mean }])),
      }),
    );
  }

  /** The link faults it was sent so far (reading what came within `ms`). */
  async linkFaults(ms: number): Promise<{ subject: string; id: string; iteration: number }[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        this.received.push(await this.end.next(left));
      } catch {
        break;
      }
    }
    return this.received
      .filter((message) => message.contentType === ContentType.fault)
      .map((message) => decodeBody('ctrl.Fault', message.body));
  }

  close(): void {
    this.end.socket.destroy();
  }
}

interface ReportedLink {
  readonly id: string;
  readonly to: string;
  readonly iteration?: number;
}

const enrolled = (collection: 'edge-routers' | 'transit-routers' = 'edge-routers') =>
  enrolledRouter(controller, call, unique(collection === 'edge-routers' ? 'edge' : 'transit'), collection);

/** A router connected past its hello, to the test controller's endpoint or the second one (`port`). */
async function connected(router: { id: string; credentials: Credentials }, port?: number): Promise<Router> {
  const end = await dialCtrl(controller(), router.credentials, { answerHeartbeats: true, ...(port ? { port } : {}) });
  const answer = await end.hello(router.id);
  expect(answer.headers.get(Header.resultSuccess)).toEqual(Buffer.from([1]));
  return new Router(router.id, end);
}

/** Two routers connected to the test controller's endpoint (a the dialer, b its peer). */
async function pair(): Promise<[Router, Router]> {
  const [a, b] = await Promise.all([enrolled(), enrolled('transit-routers')]);
  return [await connected(a), await connected(b)];
}

/** Polls until `read` answers what `check` accepts, for at most `timeoutMs`; its last answer. */
async function until<T>(read: () => Promise<T> | T, check: (value: T) => boolean, timeoutMs = 8_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const stored = (linkId: string) => readLink(controller().deps.store, linkId);
const storedWhen = (linkId: string, check: (link: LinkRecord | undefined) => boolean, timeoutMs?: number) =>
  until(() => stored(linkId), check, timeoutMs);

describe('links reported by the routers that dialed them', () => {
  it('are kept as the table and the graph say: created, kept at the same iteration, replaced by a higher one', async () => {
    const [a, b] = await pair();
    const id = newLinkId();

    a.reportLinks([{ id, to: b.id }]);

    const link = await storedWhen(id, (found) => found !== undefined);
    expect(link).toMatchObject({
      id,
      iteration: 1,
      sourceRouterId: a.id,
      destRouterId: b.id,
      protocol: 'tls',
      dialAddress: `tls:${b.id}.links.test:13102`,
      state: 'Connected',
      down: false,
      staticCost: 1,
      sourceLatency: INITIAL_LINK_LATENCY_NS,
      destLatency: INITIAL_LINK_LATENCY_NS,
      connections: [{ type: 'link.default', source: 'a:1', dest: 'b:2' }],
      connectionsIteration: 1,
    });
    expect(linkCostOf(link!)).toBe(130_001);
    expect(controller().ctrl.linkGraph.link(id)).toEqual(link);
    expect((await readLinks(controller().deps.store)).map((each) => each.id)).toContain(id);
    expect(controller().ctrl.linkGraph.isUsable(link!)).toBe(true);
    expect(controller().ctrl.linkGraph.neighbours(b.id)).toContainEqual({ routerId: a.id, link });

    a.reportLinks([{ id, to: b.id }]);
    a.reportLinks([{ id, to: b.id, iteration: 3 }]);
    const replaced = await storedWhen(id, (found) => found?.iteration === 3);
    expect(replaced).toMatchObject({ iteration: 3, sourceRouterId: a.id });
    expect(replaced!.createdAt >= link!.createdAt).toBe(true);
    a.reportLinks([{ id, to: b.id, iteration: 2 }]);
    // A report after the lower one: once it is applied, so was the lower one (each router's reports go in order).
    const other = newLinkId();
    a.reportLinks([{ id: other, to: b.id }]);
    await storedWhen(other, (found) => found !== undefined);
    expect((await stored(id))?.iteration).toBe(3);
    a.close();
    b.close();
  });

  it('are refused from a router that did not dial them, or to a router that does not exist', async () => {
    const [a, b] = await pair();
    const id = newLinkId();
    a.reportLinks([{ id, to: b.id }]);
    await storedWhen(id, (found) => found !== undefined);

    // B reports A's link as its own, at a higher iteration; and a link to nobody.
    b.reportLinks([{ id, to: a.id, iteration: 9 }]);
    const nowhere = newLinkId();
    b.reportLinks([{ id: nowhere, to: 'no-such-router' }]);
    const marker = newLinkId();
    b.reportLinks([{ id: marker, to: a.id }]);
    await storedWhen(marker, (found) => found !== undefined);

    expect(await stored(id)).toMatchObject({ iteration: 1, sourceRouterId: a.id, destRouterId: b.id });
    expect(await stored(nowhere)).toBeUndefined();
    a.close();
    b.close();
  });

  it("are pruned by their router's full refresh when it no longer holds them, and only its own", async () => {
    const [a, b] = await pair();
    const [kept, dropped, ofB] = [newLinkId(), newLinkId(), newLinkId()];
    a.reportLinks([
      { id: kept, to: b.id },
      { id: dropped, to: b.id },
    ]);
    b.reportLinks([{ id: ofB, to: a.id }]);
    await storedWhen(ofB, (found) => found !== undefined);
    await storedWhen(dropped, (found) => found !== undefined);

    a.reportLinks([{ id: kept, to: b.id }], true);

    await storedWhen(dropped, (found) => found === undefined);
    expect(await stored(dropped)).toBeUndefined();
    expect(controller().ctrl.linkGraph.link(dropped)).toBeUndefined();
    expect(await stored(kept)).toBeDefined();
    expect(await stored(ofB)).toBeDefined();
    a.close();
    b.close();
  });

  it('take their underlay connections from their source, a newer set only', async () => {
    const [a, b] = await pair();
    const id = newLinkId();
    a.reportLinks([{ id, to: b.id }]);
    await storedWhen(id, (found) => found !== undefined);
    const update = (router: Router, stateIteration: number, conns: number) =>
      router.send(
        ContentType.linkState,
        encodeBody('ctrl.LinkStateUpdate', {
          linkId: id,
          linkIteration: 1,
          connState: {
            stateIteration,
            conns: Array.from({ length: conns }, (_, n) => ({
              type: 'link.default',
              localAddr: `a:${n}`,
              remoteAddr: 'b:2',
            })),
          },
        }),
      );

    update(b, 5, 4);
    update(a, 3, 3);
    update(a, 2, 2);
    const marker = newLinkId();
    a.reportLinks([{ id: marker, to: b.id }]);
    await storedWhen(marker, (found) => found !== undefined);

    expect(await stored(id)).toMatchObject({ connectionsIteration: 3 });
    expect((await stored(id))?.connections).toHaveLength(3);
    a.close();
    b.close();
  });

  it('cost what each end measures, written at once when first measured, then at most every 30 s', async () => {
    const [a, b] = await pair();
    const id = newLinkId();
    a.reportLinks([{ id, to: b.id }]);
    await storedWhen(id, (found) => found !== undefined);

    a.metrics({ [`link.${id}.latency`]: 3_000_000.5, [`link.${id}.queue_time`]: 40_000, 'link.other.latency': 1 });
    b.metrics({ [`link.${id}.latency`]: 5_500_000 });
    const measured = await storedWhen(
      id,
      (found) => found?.destLatency === 5_500_000 && found.sourceLatency !== INITIAL_LINK_LATENCY_NS,
    );
    expect(measured).toMatchObject({ sourceLatency: 3_040_000, destLatency: 5_500_000 });
    expect(linkCostOf(measured!)).toBe(1 + 3 + 5);

    // Changed within 30 s: known here at once, not written.
    a.metrics({ [`link.${id}.latency`]: 9_000_000 });
    expect(
      await until(
        () => controller().ctrl.linkGraph.link(id)?.sourceLatency,
        (latency) => latency === 9_000_000,
      ),
    ).toBe(9_000_000);
    // Past the change log's next poll, which reads the link's last written revision again: the measurement stays.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(controller().ctrl.linkGraph.link(id)?.sourceLatency).toBe(9_000_000);
    expect((await stored(id))?.sourceLatency).toBe(3_040_000);
    controller().advanceClock(LATENCY_WRITE_INTERVAL_MS);
    try {
      a.metrics({ [`link.${id}.latency`]: 9_000_000 });
      expect((await storedWhen(id, (found) => found?.sourceLatency === 9_000_000))?.sourceLatency).toBe(9_000_000);
    } finally {
      controller().advanceClock(-LATENCY_WRITE_INTERVAL_MS);
    }
    a.close();
    b.close();
  });
});

describe('link faults', () => {
  it('end a link when one of its routers reports it, and tell the other one', async () => {
    const [a, b] = await pair();
    const [faulted, duplicate] = [newLinkId(), newLinkId()];
    a.reportLinks([
      { id: faulted, to: b.id, iteration: 2 },
      { id: duplicate, to: b.id },
    ]);
    await storedWhen(duplicate, (found) => found !== undefined);

    b.fault('LinkFault', faulted, 2);
    a.fault('LinkDuplicate', duplicate, 1);

    await storedWhen(faulted, (found) => found === undefined);
    await storedWhen(duplicate, (found) => found === undefined);
    expect(controller().ctrl.linkGraph.link(faulted)).toBeUndefined();
    const toA = await until(
      () => a.linkFaults(200),
      (faults) => faults.length > 0,
    );
    const toB = await until(
      () => b.linkFaults(200),
      (faults) => faults.length > 0,
    );
    expect(toA).toEqual([{ subject: 'LinkFault', id: faulted, iteration: 2 }]);
    expect(toB).toEqual([{ subject: 'LinkFault', id: duplicate, iteration: 1 }]);
    a.close();
    b.close();
  });

  it("count only from the link's routers, and not for an older iteration", async () => {
    const [a, b] = await pair();
    const c = await connected(await enrolled());
    const id = newLinkId();
    a.reportLinks([{ id, to: b.id, iteration: 4 }]);
    await storedWhen(id, (found) => found !== undefined);

    c.fault('LinkFault', id, 4);
    b.fault('LinkFault', id, 3);
    const marker = newLinkId();
    b.reportLinks([{ id: marker, to: a.id }]);
    await storedWhen(marker, (found) => found !== undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(await stored(id)).toMatchObject({ iteration: 4 });
    expect(await a.linkFaults(300)).toEqual([]);
    a.close();
    b.close();
    c.close();
  });
});

describe('dead links', () => {
  it('are removed when their source disconnects', async () => {
    const [a, b] = await pair();
    const [fromA, fromB] = [newLinkId(), newLinkId()];
    a.reportLinks([{ id: fromA, to: b.id }]);
    b.reportLinks([{ id: fromB, to: a.id }]);
    await storedWhen(fromB, (found) => found !== undefined);
    await storedWhen(fromA, (found) => found !== undefined);

    a.close();

    await storedWhen(fromA, (found) => found === undefined);
    expect(await stored(fromA)).toBeUndefined();
    // B's link to A stays until B faults it (its router sees the link close), as the reference keeps it; unusable.
    const kept = await stored(fromB);
    expect(kept).toBeDefined();
    expect(
      await until(
        () => controller().ctrl.linkGraph.isUsable(kept!),
        (usable) => !usable,
      ),
    ).toBe(false);
    b.close();
  });

  it('are removed once the lease of a source whose endpoint died runs out', async () => {
    const b = await connected(await enrolled());
    const dying = await enrolled();
    // A's connection as an endpoint that then died wrote it, a link it reported then: its lease runs out once the link
    // is in the graph (a link that arrives after its source was seen offline waits for the minute's scan of every
    // link, so the lease must not run out first on a loaded machine).
    const connection = { ...routerConnectionOf(dying.id, 'dying-connection'), leaseExpiresAt: Date.now() + 60_000 };
    await putRouterConnection(
      controller().deps.store,
      'edge-routers',
      connection,
      fingerprintOfCredentials(dying.credentials),
    );
    const id = newLinkId();
    const store = controller().deps.store;
    await reportLink(
      store,
      {
        id,
        iteration: 1,
        destRouterId: b.id,
        protocol: 'tls',
        dialAddress: 'tls:b:1',
        connections: [],
        connectionsIteration: 0,
      },
      { routerId: dying.id, connectionId: 'dying-connection', endpointId: 'dead-endpoint' },
      new Date(),
    );
    await until(
      () => controller().ctrl.linkGraph.link(id),
      (found) => found !== undefined,
    );
    // The endpoint dies: its last renewal's lease is over now, and nothing renews it.
    expect(await renewRouterLease(store, 'edge-routers', dying.id, 'dying-connection', Date.now())).toBe(true);

    // Within a read of every connection after the lease ran out.
    expect(await storedWhen(id, (found) => found === undefined, 15_000)).toBeUndefined();
    b.close();
  });
});

describe('two endpoint processes', () => {
  it('hold the same graph from the change log: links, latencies, removals, and pass a fault on', async () => {
    const a = await connected(await enrolled());
    const c = await connected(await enrolled('transit-routers'), second.port);
    const [fromA, fromC] = [newLinkId(), newLinkId()];
    const graphs = () => [controller().ctrl.linkGraph, second.endpoint.linkGraph];
    const everywhere = (check: (link: LinkRecord | undefined) => boolean, id: string) =>
      until(
        () => graphs().map((graph) => graph.link(id)),
        (seen) => seen.every(check),
      );

    a.reportLinks([{ id: fromA, to: c.id }]);
    c.reportLinks([{ id: fromC, to: a.id }]);
    const [onFirst, onSecond] = await everywhere((link) => link !== undefined, fromA);
    expect(onSecond).toEqual(onFirst);
    expect((await everywhere((link) => link !== undefined, fromC))[0]).toMatchObject({ sourceRouterId: c.id });

    c.metrics({ [`link.${fromA}.latency`]: 7_000_000 });
    const measured = await everywhere((link) => link?.destLatency === 7_000_000, fromA);
    expect(measured.map((link) => link?.destLatency)).toEqual([7_000_000, 7_000_000]);
    expect(graphs().map((graph) => graph.isUsable(measured[0]!))).toEqual([true, true]);

    // C (on the second endpoint) faults A's link: A, on the first, is told.
    c.fault('LinkFault', fromA, 1);
    expect(await everywhere((link) => link === undefined, fromA)).toEqual([undefined, undefined]);
    expect(
      await until(
        () => a.linkFaults(200),
        (faults) => faults.length > 0,
      ),
    ).toEqual([{ subject: 'LinkFault', id: fromA, iteration: 1 }]);
    a.close();
    c.close();
  });
});
