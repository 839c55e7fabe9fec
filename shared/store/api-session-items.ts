import { GetCommand, paginateQuery, QueryCommand, type QueryCommandInput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ApiError } from '../errors/api-error.ts';
import { counterOp, type Store } from './entity-store.ts';
import { keys, PREFIXES } from './keys.ts';
import { readOptions } from './read-consistency.ts';
import { unlessConditionFails } from './table-client.ts';
import { itemOps, type WriteOp } from './write-op.ts';

/**
 * The items of API sessions (`shared/auth/api-session-store.ts` holds what they mean): each session is keyed by the
 * hash of its token, so the per-request lookup is one strongly consistent read, with a pointer from its id to that
 * hash for the admin operations that address sessions by id. Three indexes hold them:
 *
 * - the type's (GSI1, id order) holds the **pointer**, which never changes after the login: a session's touch (its
 *   last activity, at most once a minute) rewrites no entry of that one partition, which every session shares;
 * - its identity's sessions (GSI2) hold the session item itself, so whether an identity has a live session is one
 *   query (a touch rewrites that copy too, but the partition is the identity's own: no one partition takes them all);
 * - the activity index (GSI3, keys only, by last activity, so the expired ones are a key range) is spread over
 *   {@link ACTIVITY_SHARDS} partitions by the token hash, which its readers query in parallel.
 *
 * Sessions stored before this layout (their GSI1 keys on the session item, GSI3 in one partition) are read alike
 * until they end: the readers take both, and a touch moves a session's activity key into its shard.
 *
 * Every write that adds or removes a session moves the type's counter in the same transaction.
 */

export const API_SESSIONS_COLLECTION = 'api-sessions';

/** The activity index's partitions: each takes about 1/16 of the touches, so none is the network's bottleneck. */
const ACTIVITY_SHARDS = 16;

/** GSI3's one partition before it was sharded; read until the sessions stored there have ended. */
const LEGACY_ACTIVITY_PARTITION = `ACTIVITY#${API_SESSIONS_COLLECTION}`;

/** The activity shard of a session, from its token hash (hex, uniformly random). */
function activityPartitionOf(tokenHash: string): string {
  const shard = Number.parseInt(tokenHash.slice(0, 4), 16) % ACTIVITY_SHARDS;
  return `${LEGACY_ACTIVITY_PARTITION}#${Number.isNaN(shard) ? 0 : shard}`;
}

/** Every partition of the activity index, the legacy one last. */
const ACTIVITY_PARTITIONS = [
  ...Array.from({ length: ACTIVITY_SHARDS }, (_, shard) => `${LEGACY_ACTIVITY_PARTITION}#${shard}`),
  LEGACY_ACTIVITY_PARTITION,
];

/** What removing a session's items needs: its token hash and id. */
export interface SessionItemRef {
  readonly tokenHash: string;
  readonly id: string;
}

/** The fields of a new session's item: the document, its identity and its TTL. */
export interface NewSessionItem extends SessionItemRef {
  readonly identityId: string;
  readonly lastActivityAt: string;
  readonly [field: string]: unknown;
}

/**
 * The writes that store a new session: its item (which must not exist), its id pointer (in the type's index, GSI1),
 * and the counter up by one.
 */
export function putSessionOps(store: Store, session: NewSessionItem, expiresAtEpoch: number): WriteOp[] {
  const { tableName } = store;
  return [
    {
      item: {
        Put: {
          TableName: tableName,
          Item: {
            ...keys.apiSession(session.tokenHash),
            GSI2PK: keys.sessionsIndex(session.identityId),
            GSI2SK: `${API_SESSIONS_COLLECTION}#${session.id}`,
            GSI3PK: activityPartitionOf(session.tokenHash),
            GSI3SK: session.lastActivityAt,
            expiresAtEpoch,
            ...session,
          },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
    },
    {
      item: {
        Put: {
          TableName: tableName,
          Item: {
            ...keys.apiSessionPointer(session.id),
            GSI1PK: keys.typeIndex(API_SESSIONS_COLLECTION),
            GSI1SK: session.id,
            tokenHash: session.tokenHash,
          },
        },
      },
    },
    counterOp(tableName, API_SESSIONS_COLLECTION, 1),
  ];
}

/** Whether a stored item is an API session's id pointer (`keys.apiSessionPointer`). */
export function isSessionPointer(item: Readonly<Record<string, unknown>>): boolean {
  return item.SK === 'ID' && String(item.PK).startsWith(`${API_SESSIONS_COLLECTION}#`);
}

/** The session item under this token hash (strongly consistent unless `read` says otherwise), or undefined. */
export async function sessionItemOf(
  store: Store,
  tokenHash: string,
  read: 'apiSession' | 'callerOfRead' = 'apiSession',
): Promise<Record<string, unknown> | undefined> {
  const { Item } = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: keys.apiSession(tokenHash), ...readOptions(read) }),
  );
  return Item;
}

/**
 * Moves a session's last activity to `at` (its activity key, into its shard, and its TTL with it), in one conditional
 * UpdateItem, if it is still stored and active after `activeAfter`. False when it was not (gone, or idle).
 */
export async function touchSessionItem(
  store: Store,
  tokenHash: string,
  touch: { readonly at: string; readonly expiresAtEpoch: number; readonly activeAfter: string },
): Promise<boolean> {
  const touched = await unlessConditionFails(
    store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.apiSession(tokenHash),
        UpdateExpression: 'SET lastActivityAt = :at, GSI3PK = :shard, GSI3SK = :at, expiresAtEpoch = :ttl',
        ConditionExpression: 'attribute_exists(PK) AND lastActivityAt > :cutoff',
        ExpressionAttributeValues: {
          ':at': touch.at,
          ':shard': activityPartitionOf(tokenHash),
          ':ttl': touch.expiresAtEpoch,
          ':cutoff': touch.activeAfter,
        },
      }),
    ),
  );
  return touched !== undefined;
}

/**
 * An OIDC session's refresh: its live refresh token replaced (`refreshJti`, only while it is still `spent`) and its
 * activity refreshed as {@link touchSessionItem} does, in one conditional write. False when the session is gone or
 * idle, or the refresh token was spent already (by a concurrent refresh, or a replayed copy).
 */
export async function rotateRefreshOnSessionItem(
  store: Store,
  tokenHash: string,
  rotation: {
    readonly spent: string;
    readonly next: string;
    readonly at: string;
    readonly expiresAtEpoch: number;
    readonly activeAfter: string;
  },
): Promise<boolean> {
  const rotated = await unlessConditionFails(
    store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.apiSession(tokenHash),
        UpdateExpression:
          'SET lastActivityAt = :at, GSI3PK = :shard, GSI3SK = :at, expiresAtEpoch = :ttl, refreshJti = :next',
        ConditionExpression: 'attribute_exists(PK) AND lastActivityAt > :cutoff AND refreshJti = :spent',
        ExpressionAttributeValues: {
          ':at': rotation.at,
          ':shard': activityPartitionOf(tokenHash),
          ':ttl': rotation.expiresAtEpoch,
          ':cutoff': rotation.activeAfter,
          ':spent': rotation.spent,
          ':next': rotation.next,
        },
      }),
    ),
  );
  return rotated !== undefined;
}

/** The item of the session with this id, through its pointer (both read strongly consistently). */
export async function sessionItemById(store: Store, id: string): Promise<Record<string, unknown> | undefined> {
  const { Item: pointer } = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: keys.apiSessionPointer(id), ...readOptions('apiSession') }),
  );
  if (typeof pointer?.tokenHash !== 'string') return undefined;
  const { Item } = await store.db.send(
    new GetCommand({
      TableName: store.tableName,
      Key: keys.apiSession(pointer.tokenHash),
      ...readOptions('apiSession'),
    }),
  );
  return Item;
}

/** Which of these session ids still have their pointer. */
export async function sessionIdsStored(store: Store, ids: readonly string[]): Promise<Set<string>> {
  const items = await store.batchGet(ids.map(keys.apiSessionPointer), 'PK');
  return new Set(items.map((item) => String(item.PK).slice(`${API_SESSIONS_COLLECTION}#`.length)));
}

/**
 * The writes that remove sessions: each item (only if still there, and idle since `idleBy` when given) and its id
 * pointer, and the counter down by as many, `afterCommit` following the commit. A failed condition cancels all of them
 * and answers `onGone`'s error.
 */
export function removeSessionOps(
  store: Store,
  sessions: readonly SessionItemRef[],
  onGone: () => ApiError,
  options: { readonly idleBy?: string; readonly afterCommit?: () => Promise<void> } = {},
): WriteOp[] {
  if (sessions.length === 0) return [];
  const { tableName } = store;
  const condition = options.idleBy
    ? {
        ConditionExpression: 'attribute_exists(PK) AND lastActivityAt <= :cutoff',
        ExpressionAttributeValues: { ':cutoff': options.idleBy },
      }
    : { ConditionExpression: 'attribute_exists(PK)' };
  return [
    ...sessions.flatMap((session): WriteOp[] => [
      {
        item: { Delete: { TableName: tableName, Key: keys.apiSession(session.tokenHash), ...condition } },
        onConditionFailed: onGone,
      },
      { item: { Delete: { TableName: tableName, Key: keys.apiSessionPointer(session.id) } } },
    ]),
    {
      ...counterOp(tableName, API_SESSIONS_COLLECTION, -sessions.length),
      ...(options.afterCommit ? { afterCommit: options.afterCommit } : {}),
    },
  ];
}

/** The plain fields a write may set on a session item, and those it may require. */
type SessionFields = Readonly<Record<string, string | number | boolean>>;

/**
 * The write, for a transaction, that sets fields of a session item that must still exist (and hold `requires`); a
 * failed condition answers `onFailed`'s error.
 */
export function setSessionFieldsOp(
  store: Store,
  tokenHash: string,
  fields: SessionFields,
  onFailed: () => ApiError,
  requires: SessionFields = {},
): WriteOp {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = Object.entries(fields).map(([field, value], index) => {
    names[`#s${index}`] = field;
    values[`:s${index}`] = value;
    return `#s${index} = :s${index}`;
  });
  const conditions = Object.entries(requires).map(([field, value], index) => {
    names[`#r${index}`] = field;
    values[`:r${index}`] = value;
    return ` AND #r${index} = :r${index}`;
  });
  return {
    item: {
      Update: {
        TableName: store.tableName,
        Key: keys.apiSession(tokenHash),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: `attribute_exists(PK)${conditions.join('')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
    onConditionFailed: onFailed,
  };
}

/**
 * Adds `delta` to a number on a session item in one atomic ADD, if the item exists and the number stays within
 * `bounds` (checked against the value before: `below` for counting up, where a missing number counts as 0; `above`
 * for counting down, where it must be there). The new value, or undefined when the item is gone or the bound refused.
 */
export async function addToSessionNumber(
  store: Store,
  tokenHash: string,
  field: string,
  delta: number,
  bounds: { readonly below?: number; readonly above?: number } = {},
): Promise<number | undefined> {
  const values: Record<string, unknown> = { ':delta': delta };
  let condition = 'attribute_exists(PK)';
  if (bounds.below !== undefined) {
    condition += ' AND (attribute_not_exists(#n) OR #n < :below)';
    values[':below'] = bounds.below;
  }
  if (bounds.above !== undefined) {
    condition += ' AND #n > :above';
    values[':above'] = bounds.above;
  }
  const updated = await unlessConditionFails(
    store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.apiSession(tokenHash),
        UpdateExpression: 'ADD #n :delta',
        ConditionExpression: condition,
        ExpressionAttributeNames: { '#n': field },
        ExpressionAttributeValues: values,
        ReturnValues: 'UPDATED_NEW',
      }),
    ),
  );
  return updated && Number(updated.Attributes?.[field] ?? 0);
}

/**
 * The stored items of these session keys (`APISESSION#<hash>`), read strongly consistently (the indexes that named
 * them lag behind removals), in the order given; keys of sessions gone are left out. `projection` narrows the items.
 */
export async function sessionItemsOf(
  store: Store,
  sessionPks: readonly string[],
  projection?: string,
): Promise<Record<string, unknown>[]> {
  const unique = [...new Set(sessionPks)];
  const items = await store.batchGet(
    unique.map((PK) => ({ PK, SK: 'META' })),
    projection,
  );
  const found = new Map(items.map((item) => [String(item.PK), item]));
  return unique.flatMap((pk) => {
    const item = found.get(pk);
    return item ? [item] : [];
  });
}

/** A session item's token hash, from its key. */
export function tokenHashOf(sessionPk: string): string {
  return sessionPk.slice(PREFIXES.apiSession.length);
}

/** Which of an identity's session items a read takes: those created before `createdBefore`, and opened by `openedBy`. */
export interface IdentitySessionFilter {
  /** When given: only sessions created before this instant (ISO-8601). */
  readonly createdBefore?: string;
  /** When given: only sessions this authenticator opened and that end with it. */
  readonly openedBy?: string;
}

/**
 * The keys of the identity's session items the filter takes, a page of at most `pageSize` read at a time (its index
 * partition, which may still name a removed one), in id order.
 */
export async function* sessionKeyPagesOfIdentity(
  store: Store,
  identityId: string,
  filter: IdentitySessionFilter,
  pageSize: number,
): AsyncGenerator<string[], void, undefined> {
  for await (const items of sessionIndexPages(store, identityId, filter, pageSize, 'PK')) {
    yield items.map((item) => String(item.PK));
  }
}

/**
 * The identity's session items the filter takes, as its index partition holds them (the whole item is projected
 * there, eventually consistent: it may still hold a removed session, or an older activity), a page at a time.
 */
export function sessionItemPagesOfIdentity(
  store: Store,
  identityId: string,
  filter: IdentitySessionFilter,
  pageSize: number,
): AsyncGenerator<Record<string, unknown>[], void, undefined> {
  return sessionIndexPages(store, identityId, filter, pageSize);
}

async function* sessionIndexPages(
  store: Store,
  identityId: string,
  filter: IdentitySessionFilter,
  pageSize: number,
  projection?: string,
): AsyncGenerator<Record<string, unknown>[], void, undefined> {
  const conditions = [
    ...(filter.createdBefore === undefined ? [] : ['createdAt < :before']),
    ...(filter.openedBy === undefined ? [] : ['authenticatorId = :authenticator', 'endsWithAuthenticator = :ends']),
  ];
  const query: QueryCommandInput = {
    TableName: store.tableName,
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :sessions',
    // ISO-8601 UTC timestamps of one length order as text the way they order in time.
    ...(conditions.length > 0 ? { FilterExpression: conditions.join(' AND ') } : {}),
    ExpressionAttributeValues: {
      ':sessions': keys.sessionsIndex(identityId),
      ...(filter.createdBefore === undefined ? {} : { ':before': filter.createdBefore }),
      ...(filter.openedBy === undefined ? {} : { ':authenticator': filter.openedBy, ':ends': true }),
    },
    ...(projection === undefined ? {} : { ProjectionExpression: projection }),
    Limit: pageSize,
  };
  for await (const page of paginateQuery({ client: store.db }, query)) {
    const found = page.Items ?? [];
    if (found.length > 0) yield found;
  }
}

/** Whether the identity has a session active after `activeAfter`, and created at or after `createdFrom` when given. */
export async function identityHasActiveSession(
  store: Store,
  identityId: string,
  activeAfter: string,
  createdFrom?: string,
): Promise<boolean> {
  const query: QueryCommandInput = {
    TableName: store.tableName,
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :sessions',
    FilterExpression: `lastActivityAt > :cutoff${createdFrom ? ' AND createdAt >= :validFrom' : ''}`,
    ExpressionAttributeValues: {
      ':sessions': keys.sessionsIndex(identityId),
      ':cutoff': activeAfter,
      ...(createdFrom ? { ':validFrom': createdFrom } : {}),
    },
    Select: 'COUNT',
  };
  for await (const page of paginateQuery({ client: store.db }, query)) if ((page.Count ?? 0) > 0) return true;
  return false;
}

/** Sessions of the type (all of them) or of one identity. */
export type SessionPartition = { readonly all: true } | { readonly identityId: string };

/** A type-index entry of a session: its own key (a pointer's, or an older session item's) and its session item's. */
export interface TypeIndexEntry {
  readonly entryPk: string;
  readonly sessionPk: string;
}

/**
 * The writes that remove the id pointers whose session items DynamoDB's TTL deleted (a TTL delete takes the item
 * alone, and moves no counter): each pointer if still there, and the counter down by as many, so the session is
 * counted out exactly once. Entries that are session items themselves (stored before the pointers) went with TTL.
 */
export function removeDanglingPointerOps(store: Store, entries: readonly TypeIndexEntry[]): WriteOp[] {
  const pointers = entries.filter((entry) => entry.entryPk !== entry.sessionPk);
  if (pointers.length === 0) return [];
  return [
    ...pointers.map((entry) => itemOps.remove(store.tableName, { PK: entry.entryPk, SK: 'ID' }, { ifStored: true })),
    counterOp(store.tableName, API_SESSIONS_COLLECTION, -pointers.length),
  ];
}

/** The key of the session item a type-index entry names: a pointer's session, or (stored before) the session itself. */
function sessionPkOfTypeEntry(entry: Record<string, unknown>): string {
  const pk = String(entry.PK);
  return pk.startsWith(PREFIXES.apiSession) ? pk : `${PREFIXES.apiSession}${String(entry.tokenHash)}`;
}

/**
 * The type index's entries of API sessions in id order: pointers (which carry no activity, so the filter keeps them
 * all) and, from before the pointers were indexed, session items active after `activeAfter`.
 */
function typeIndexQuery(store: Store, activeAfter: string): QueryCommandInput {
  return {
    TableName: store.tableName,
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :partition',
    // ISO-8601 UTC timestamps of one length order as text the way they order in time.
    FilterExpression: 'attribute_not_exists(lastActivityAt) OR lastActivityAt > :cutoff',
    ExpressionAttributeValues: { ':partition': keys.typeIndex(API_SESSIONS_COLLECTION), ':cutoff': activeAfter },
    ProjectionExpression: 'PK, tokenHash',
  };
}

/** Every session item of the partition active after `activeAfter`. */
export async function activeSessionItems(
  store: Store,
  partition: SessionPartition,
  activeAfter: string,
): Promise<Record<string, unknown>[]> {
  if ('all' in partition) {
    const sessionPks: string[] = [];
    for await (const page of paginateQuery({ client: store.db }, typeIndexQuery(store, activeAfter))) {
      for (const entry of page.Items ?? []) sessionPks.push(sessionPkOfTypeEntry(entry));
    }
    const items = await sessionItemsOf(store, sessionPks);
    return items.filter((item) => String(item.lastActivityAt) > activeAfter);
  }
  const items: Record<string, unknown>[] = [];
  const query: QueryCommandInput = {
    TableName: store.tableName,
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :partition',
    FilterExpression: 'lastActivityAt > :cutoff',
    ExpressionAttributeValues: { ':partition': keys.sessionsIndex(partition.identityId), ':cutoff': activeAfter },
  };
  for await (const page of paginateQuery({ client: store.db }, query)) items.push(...(page.Items ?? []));
  return items;
}

/**
 * The keys of the first `wanted` session items in id order (`asc`/`desc`), leaving out those `idle` names (the
 * activity index's expired keys, read beside this), from the type index's small entries: each request reads at least
 * as many as all before it, so the idle sessions in between cost few requests.
 */
export async function activeSessionKeysInIdOrder(
  store: Store,
  activeAfter: string,
  direction: 'asc' | 'desc',
  wanted: number,
  idle: Promise<ReadonlySet<string>>,
): Promise<TypeIndexEntry[]> {
  const found: TypeIndexEntry[] = [];
  let evaluated = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(
      new QueryCommand({
        ...typeIndexQuery(store, activeAfter),
        ScanIndexForward: direction === 'asc',
        Limit: Math.max(wanted - found.length, evaluated),
        ExclusiveStartKey: start,
      }),
    );
    evaluated += page.ScannedCount ?? 0;
    const idleKeys = await idle;
    for (const entry of page.Items ?? []) {
      const sessionPk = sessionPkOfTypeEntry(entry);
      if (!idleKeys.has(sessionPk)) found.push({ sessionPk, entryPk: String(entry.PK) });
    }
    start = page.LastEvaluatedKey;
  } while (start && found.length < wanted);
  return found.slice(0, wanted);
}

/**
 * The keys of session items idle since `idleBy` (last activity at or before it), oldest first, from the activity
 * index's shards read in parallel (keys only, thousands per request): all of them, or at most `limit`.
 */
export async function idleSessionKeys(store: Store, idleBy: string, limit?: number): Promise<string[]> {
  const shards = await Promise.all(
    ACTIVITY_PARTITIONS.map(async (partition) => {
      const found: { pk: string; at: string }[] = [];
      const query: QueryCommandInput = {
        TableName: store.tableName,
        IndexName: 'GSI3',
        KeyConditionExpression: 'GSI3PK = :activity AND GSI3SK <= :cutoff',
        ExpressionAttributeValues: { ':activity': partition, ':cutoff': idleBy },
        ProjectionExpression: 'PK, GSI3SK',
        ...(limit === undefined ? {} : { Limit: limit }),
      };
      for await (const page of paginateQuery({ client: store.db }, query)) {
        for (const item of page.Items ?? []) found.push({ pk: String(item.PK), at: String(item.GSI3SK) });
        if (limit !== undefined && found.length >= limit) break;
      }
      return found;
    }),
  );
  const oldestFirst = shards.flat().sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const keysFound = oldestFirst.map((entry) => entry.pk);
  return limit === undefined ? keysFound : keysFound.slice(0, limit);
}

/**
 * The keys of every session item (`APISESSION#<hash>`) in id order, a page of at most `pageSize` at a time, from the
 * type index's small entries (pointers, and older session items active after `activeAfter`): what a full pass over the
 * sessions reads without holding them all (a router's full sync).
 */
export async function* sessionKeyPages(
  store: Store,
  activeAfter: string,
  pageSize: number,
): AsyncGenerator<string[], void, undefined> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await store.db.send(
      new QueryCommand({ ...typeIndexQuery(store, activeAfter), Limit: pageSize, ExclusiveStartKey: start }),
    );
    const found = (page.Items ?? []).map(sessionPkOfTypeEntry);
    if (found.length > 0) yield found;
    start = page.LastEvaluatedKey;
  } while (start);
}
