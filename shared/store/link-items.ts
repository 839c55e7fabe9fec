import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ctrlChangeOp } from './ctrl-changes.ts';
import type { Store } from './entity-store.ts';
import { queryAll } from './index-queries.ts';
import { fitsKey, keys } from './keys.ts';
import type { LinkFaultNotice } from './mesh-notices.ts';
import { readOptions } from './read-consistency.ts';
import { unlessTransactionConditionFails } from './table-client.ts';
import type { WriteOp } from './write-op.ts';

/**
 * The links between routers, as the table keeps them (one item a link, `LINK#<id>`, every one in GSI1 `TYPE#links`):
 * what the routers that dialed them reported, so that every endpoint process (each keeps the graph in memory from
 * here and the change log: `ctrl-channel/link-graph.ts`) and every function (the fabric API's `GET /links`) agree on
 * the graph. Each write puts a `link` notice in its own transaction (`mesh-notices.ts`).
 *
 * The reference's link model (`controller/model/link_model.go`), in this project's terms:
 *
 * - a link is created by the router that dialed it (its source), under the id that router made, with the iteration of
 *   its dial; a report of a higher iteration replaces it, a lower or equal one changes nothing;
 * - its cost is its static cost plus each end's latency in whole milliseconds ({@link linkCostOf}), each end's latency
 *   being what its router measures of the link's heartbeats, 65 s each until measured (so a new link costs 130,001);
 * - a fault from one of its routers, a full refresh of its source that leaves it out, or its source going offline
 *   removes it: the reference removes a failed link at once, so a stored link is always `Connected`.
 */

/** A link's state: what the reference's fabric API shows. Stored links are `Connected` (a failed one is removed). */
export type LinkState = 'Connected' | 'Failed' | 'Duplicate';

/** One underlay connection of a link, as the fabric API shows it. */
export interface LinkConnection {
  readonly type: string;
  readonly source: string;
  readonly dest: string;
}

export interface LinkRecord {
  readonly id: string;
  /** The dial attempt of the source that made it (from 1): a higher one replaces the link. */
  readonly iteration: number;
  /** The router that dialed it and reported it. */
  readonly sourceRouterId: string;
  readonly destRouterId: string;
  /** The link listener's protocol (`tls`). */
  readonly protocol: string;
  /** The address the source dialed (the destination's advertised link listener). */
  readonly dialAddress: string;
  readonly state: LinkState;
  /** Administratively down (never set here: no API changes links yet). */
  readonly down: boolean;
  readonly staticCost: number;
  /** What the source measures of the link's round trip (heartbeats, plus its send queue), in nanoseconds. */
  readonly sourceLatency: number;
  /** What the destination measures, in nanoseconds. */
  readonly destLatency: number;
  /** Its underlay connections, and the source's number of that set (a late report never replaces a newer set). */
  readonly connections: readonly LinkConnection[];
  readonly connectionsIteration: number;
  /** The source's control channel connection that last reported it: its end leaves the link dead. */
  readonly reportedByConnection: string;
  /** Moved on by every write of the link (from 1): what a reader keeps the newest of, and a write is conditioned on. */
  readonly revision: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What a router reports of a link it dialed. */
export interface ReportedLink {
  readonly id: string;
  readonly iteration: number;
  readonly destRouterId: string;
  readonly protocol: string;
  readonly dialAddress: string;
  readonly connections: readonly LinkConnection[];
  readonly connectionsIteration: number;
}

/** Who reports: the source router, on which control channel connection, held by which endpoint. */
export interface LinkReporter {
  readonly routerId: string;
  readonly connectionId: string;
  readonly endpointId: string;
}

/** The latency a link's end is taken to have until its router measures it: the reference's `initialLinkLatency`. */
export const INITIAL_LINK_LATENCY_NS = 65_000_000_000;
/** A new link's static cost (the reference's). */
const STATIC_COST = 1;
/** How many times a report is tried again when another write changed the link between its read and its write. */
const RACES_TRIED = 3;

/** A link's cost, as routing compares paths: its static cost and each end's latency in whole milliseconds. */
export function linkCostOf(link: Pick<LinkRecord, 'staticCost' | 'sourceLatency' | 'destLatency'>): number {
  return link.staticCost + Math.trunc(link.sourceLatency / 1e6) + Math.trunc(link.destLatency / 1e6);
}

const LAYOUT = new Set(['PK', 'SK', 'GSI1PK', 'GSI1SK']);

function linkOf(item: Record<string, unknown> | undefined): LinkRecord | undefined {
  if (!item || typeof item.id !== 'string' || typeof item.iteration !== 'number') return undefined;
  return Object.fromEntries(Object.entries(item).filter(([key]) => !LAYOUT.has(key))) as unknown as LinkRecord;
}

function noticeOp(store: Store, linkId: string, endpointId: string, now: Date, fault?: LinkFaultNotice): WriteOp {
  return ctrlChangeOp(store, { kind: 'link', linkId, endpointId, ...(fault ? { fault } : {}) }, now);
}

async function transact(store: Store, items: readonly WriteOp[]): Promise<boolean> {
  const written = await unlessTransactionConditionFails(
    store.db.send(new TransactWriteCommand({ TransactItems: items.map((op) => op.item) })),
  );
  return written !== undefined;
}

/**
 * A link by id, read strongly (what a fault or a report is checked against, and the fabric API's `GET /links/{id}`);
 * undefined when it is not stored (an id that fits no key names none).
 */
export async function readLink(store: Store, linkId: string): Promise<LinkRecord | undefined> {
  if (!fitsKey(linkId)) return undefined;
  const { Item } = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: keys.link(linkId), ...readOptions('link') }),
  );
  return linkOf(Item);
}

/** The stored links among these ids, by id, read strongly (what a notice names is read again). */
export async function readLinksById(store: Store, linkIds: readonly string[]): Promise<Map<string, LinkRecord>> {
  const distinct = [...new Set(linkIds)];
  if (distinct.length === 0) return new Map();
  const items = await store.batchGet(
    distinct.map((id) => keys.link(id)),
    undefined,
    'link',
  );
  const links = items.map(linkOf).filter((link): link is LinkRecord => link !== undefined);
  return new Map(links.map((link) => [link.id, link]));
}

/**
 * Every link, in id order, from the index that holds them all: eventually consistent (a write of the last moment may
 * be missing), as a list is. The graph an endpoint keeps and the fabric API's list read this.
 */
export async function readLinks(store: Store): Promise<LinkRecord[]> {
  const items = await queryAll(store, {
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :pk',
    ExpressionAttributeValues: { ':pk': keys.linksIndex() },
    ...readOptions('links'),
  });
  return items.map(linkOf).filter((link): link is LinkRecord => link !== undefined);
}

/** What a report did: a new link, a newer iteration replacing one, one already known, or one another router owns. */
export type ReportOutcome =
  | { readonly outcome: 'created' | 'replaced'; readonly link: LinkRecord }
  | { readonly outcome: 'known'; readonly link: LinkRecord }
  | { readonly outcome: 'refused' };

/**
 * Records a link its source reports, as the reference's `RouterReportedLink`: a link not stored is created; one of a
 * lower iteration is replaced (its latencies measured anew); one of the same or a higher iteration is kept as it is,
 * though noted as reported by this connection (which keeps it alive when the router reconnects: see
 * {@link removeLink}). A link of this id dialed by another router is refused: a router creates and replaces only its
 * own links.
 */
export async function reportLink(
  store: Store,
  reported: ReportedLink,
  reporter: LinkReporter,
  now: Date,
): Promise<ReportOutcome> {
  for (let attempt = 0; attempt < RACES_TRIED; attempt++) {
    const stored = await readLink(store, reported.id);
    if (stored && stored.sourceRouterId !== reporter.routerId) return { outcome: 'refused' };
    if (stored && stored.iteration >= reported.iteration) {
      if (stored.reportedByConnection === reporter.connectionId) return { outcome: 'known', link: stored };
      const link = {
        ...stored,
        reportedByConnection: reporter.connectionId,
        updatedAt: now.toISOString(),
        revision: stored.revision + 1,
      };
      const put = putLinkOp(store, link, stored.revision);
      if (await transact(store, [put, noticeOp(store, link.id, reporter.endpointId, now)])) {
        return { outcome: 'known', link };
      }
      continue;
    }
    const link: LinkRecord = {
      id: reported.id,
      iteration: reported.iteration,
      sourceRouterId: reporter.routerId,
      destRouterId: reported.destRouterId,
      protocol: reported.protocol,
      dialAddress: reported.dialAddress,
      state: 'Connected',
      down: false,
      staticCost: STATIC_COST,
      sourceLatency: INITIAL_LINK_LATENCY_NS,
      destLatency: INITIAL_LINK_LATENCY_NS,
      connections: reported.connections,
      connectionsIteration: reported.connectionsIteration,
      reportedByConnection: reporter.connectionId,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      revision: (stored?.revision ?? 0) + 1,
    };
    const put = putLinkOp(store, link, stored?.revision);
    if (await transact(store, [put, noticeOp(store, link.id, reporter.endpointId, now)])) {
      return { outcome: stored ? 'replaced' : 'created', link };
    }
  }
  throw new Error(`link ${reported.id} kept changing while it was reported`);
}

/** The put of a link, over the stored one of revision `over` (unchanged since it was read) or where none is. */
function putLinkOp(store: Store, link: LinkRecord, over: number | undefined): WriteOp {
  return {
    item: {
      Put: {
        TableName: store.tableName,
        Item: { ...link, ...keys.link(link.id), GSI1PK: keys.linksIndex(), GSI1SK: link.id },
        ...(over === undefined
          ? { ConditionExpression: 'attribute_not_exists(PK)' }
          : { ConditionExpression: 'revision = :revision', ExpressionAttributeValues: { ':revision': over } }),
      },
    },
  };
}

/**
 * Removes a link as read: the same iteration, and, unless it is a fault (`fault`: whom to pass it on to), reported by
 * the same connection, so a link its router reported again since (connected again) is kept. False when it is no
 * longer that link.
 */
export async function removeLink(
  store: Store,
  link: Pick<LinkRecord, 'id' | 'iteration' | 'reportedByConnection'>,
  endpointId: string,
  now: Date,
  fault?: LinkFaultNotice,
): Promise<boolean> {
  const remove: WriteOp = {
    item: {
      Delete: {
        TableName: store.tableName,
        Key: keys.link(link.id),
        ...(fault
          ? {
              ConditionExpression: 'iteration = :iteration',
              ExpressionAttributeValues: { ':iteration': link.iteration },
            }
          : {
              ConditionExpression: 'iteration = :iteration AND reportedByConnection = :connection',
              ExpressionAttributeValues: { ':iteration': link.iteration, ':connection': link.reportedByConnection },
            }),
      },
    },
  };
  return transact(store, [remove, noticeOp(store, link.id, endpointId, now, fault)]);
}

/**
 * Records a link's underlay connections as its source reports them (LinkState): only for its current iteration, and
 * only a set newer than the one stored. False when nothing was written.
 */
export async function recordLinkConnections(
  store: Store,
  update: {
    readonly linkId: string;
    readonly iteration: number;
    readonly connections: readonly LinkConnection[];
    readonly connectionsIteration: number;
  },
  reporter: LinkReporter,
  now: Date,
): Promise<boolean> {
  const write: WriteOp = {
    item: {
      Update: {
        TableName: store.tableName,
        Key: keys.link(update.linkId),
        UpdateExpression:
          'SET connections = :connections, connectionsIteration = :stateIteration, updatedAt = :now, revision = revision + :one',
        ConditionExpression:
          'iteration = :iteration AND sourceRouterId = :source AND connectionsIteration < :stateIteration',
        ExpressionAttributeValues: {
          ':connections': update.connections,
          ':stateIteration': update.connectionsIteration,
          ':now': now.toISOString(),
          ':iteration': update.iteration,
          ':source': reporter.routerId,
          ':one': 1,
        },
      },
    },
  };
  return transact(store, [write, noticeOp(store, update.linkId, reporter.endpointId, now)]);
}

/** Records what one end of a link measured of its latency (nanoseconds), for its current iteration. */
export async function recordLinkLatency(
  store: Store,
  link: Pick<LinkRecord, 'id' | 'iteration'>,
  end: 'source' | 'dest',
  latency: number,
  endpointId: string,
  now: Date,
): Promise<boolean> {
  const write: WriteOp = {
    item: {
      Update: {
        TableName: store.tableName,
        Key: keys.link(link.id),
        UpdateExpression: `SET ${end === 'source' ? 'sourceLatency' : 'destLatency'} = :latency, updatedAt = :now, revision = revision + :one`,
        ConditionExpression: 'iteration = :iteration',
        ExpressionAttributeValues: {
          ':latency': latency,
          ':now': now.toISOString(),
          ':iteration': link.iteration,
          ':one': 1,
        },
      },
    },
  };
  return transact(store, [write, noticeOp(store, link.id, endpointId, now)]);
}
