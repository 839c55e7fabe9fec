import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Store } from './entity-store.ts';
import { fitsKey, keys } from './keys.ts';
import { readOptions } from './read-consistency.ts';

/** A link's state, in the reference's words (`model/link_model.go`): up, failed, or replaced by a duplicate. */
export type LinkState = 'Connected' | 'Failed' | 'Duplicate';

/** One underlay connection of a link, as the dialing router reports it (`LinkConn`: type, local and remote address). */
export interface LinkConnection {
  readonly type: string;
  readonly source: string;
  readonly dest: string;
}

/**
 * A link between two routers as the table keeps it (docs/mesh-design.md, A.7 and G.1): one item a link,
 * `LINK#<id>` / `LINK`, in GSI1's `links` partition by id. The reference keeps links in the controller's memory; here
 * every endpoint task and the fabric API's function read them from the table. Written by the endpoint task holding
 * the dialing router's channel (its RouterLinks, LinkState, faults and latency metrics).
 */
export interface LinkRecord {
  /** The id both routers name the link by (the dialer's). */
  readonly id: string;
  /** Which of the dialer's attempts this is: a report of a higher iteration replaces the link, a lower one is stale. */
  readonly iteration: number;
  /** The router that dialed the link and reports it. */
  readonly sourceRouterId: string;
  /** The router that accepted it. */
  readonly destRouterId: string;
  /** The link listener's protocol (`tls`, `dtls`, ...). */
  readonly protocol: string;
  /** The address the dialer dialed. */
  readonly dialAddress: string;
  readonly state: LinkState;
  /** When the state last changed. */
  readonly stateChangedAt: string;
  /** Set down by an administrator: not used for paths, whatever its state. */
  readonly down: boolean;
  /** The cost added to the latencies, 1 unless an administrator set another. */
  readonly staticCost: number;
  /** The latency the source router measured, in nanoseconds (65 s until the first metrics, as the reference starts). */
  readonly sourceLatency: number;
  /** The latency the destination router measured, in nanoseconds. */
  readonly destLatency: number;
  /** `staticCost` plus both latencies in whole milliseconds (`RecalculateCost`). */
  readonly cost: number;
  /** The underlay connections of the dialer's last LinkState report. */
  readonly connections: readonly LinkConnection[];
  /** The router connection (`ConnectedRouter.connectionId`) whose report wrote the item: a replaced one's is stale. */
  readonly reportedByConnection: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** How many links one page may hold (a DynamoDB query page; the fabric list pages in memory after). */
export const MAX_LINK_PAGE = 500;

/** A request for one page of links in id order: at most `limit`, after the link of id `after` (from the start without). */
export interface LinkPageRequest {
  readonly limit: number;
  readonly after?: string;
}

/** One page of links in id order, and the id to ask for the next page after, while there may be more. */
export interface LinkPage {
  readonly links: LinkRecord[];
  readonly after?: string;
}

function linkOf(item: Record<string, unknown> | undefined): LinkRecord | undefined {
  if (!item || typeof item.id !== 'string' || typeof item.sourceRouterId !== 'string') return undefined;
  const { PK: _pk, SK: _sk, GSI1PK: _gsiPk, GSI1SK: _gsiSk, ...link } = item;
  return link as unknown as LinkRecord;
}

/**
 * Stores a link as its dialer reported it, replacing what its id held (the writer decides, from the iterations,
 * whether the report wins: `RouterReportedLink`).
 */
export async function putLink(store: Store, link: LinkRecord): Promise<void> {
  await store.db.send(
    new PutCommand({
      TableName: store.tableName,
      Item: { ...link, ...keys.link(link.id), GSI1PK: keys.linksIndex, GSI1SK: link.id },
    }),
  );
}

/** One link by id; undefined when none is stored (an id that fits no key names none). */
export async function readLink(store: Store, linkId: string): Promise<LinkRecord | undefined> {
  if (!fitsKey(linkId)) return undefined;
  const { Item } = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: keys.link(linkId), ...readOptions('fabricState') }),
  );
  return linkOf(Item);
}

/**
 * One page of the links, in id order, from GSI1's `links` partition (eventually consistent, as every index: a link
 * reported a moment ago may show a moment later). `after` continues where the last page ended.
 */
export async function listLinks(store: Store, page: LinkPageRequest): Promise<LinkPage> {
  const limit = Math.min(Math.max(page.limit, 1), MAX_LINK_PAGE);
  const result = await store.db.send(
    new QueryCommand({
      TableName: store.tableName,
      IndexName: 'GSI1',
      KeyConditionExpression: page.after === undefined ? 'GSI1PK = :links' : 'GSI1PK = :links AND GSI1SK > :after',
      ExpressionAttributeValues: {
        ':links': keys.linksIndex,
        ...(page.after === undefined ? {} : { ':after': page.after }),
      },
      Limit: limit,
    }),
  );
  const links = (result.Items ?? []).map(linkOf).filter((link): link is LinkRecord => link !== undefined);
  const last = result.LastEvaluatedKey?.GSI1SK;
  return { links, ...(typeof last === 'string' ? { after: last } : {}) };
}

/** Every link, in id order: every page of {@link listLinks}. */
export async function everyLink(store: Store): Promise<LinkRecord[]> {
  const links: LinkRecord[] = [];
  let after: string | undefined;
  do {
    const page = await listLinks(store, { limit: MAX_LINK_PAGE, ...(after === undefined ? {} : { after }) });
    links.push(...page.links);
    after = page.after;
  } while (after !== undefined);
  return links;
}
