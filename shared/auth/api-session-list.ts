import { type Authenticator, authenticators } from '../entities/authenticator.ts';
import { type Identity, identities } from '../entities/identity.ts';
import { pinnedValues } from '../list/candidate-keys.ts';
import type { ListParams } from '../list/list-params.ts';
import { type ListPage, pageInMemory } from '../list/page-in-memory.ts';
import { mapBounded } from '../map-bounded.ts';
import type { Deps } from '../ports/deps.ts';
import {
  activeSessionItems,
  activeSessionKeysInIdOrder,
  idleSessionKeys,
  removeDanglingPointerOps,
  type SessionPartition,
  sessionItemsOf,
  type TypeIndexEntry,
} from '../store/api-session-items.ts';
import { count } from '../store/index-queries.ts';
import { fitsKey } from '../store/keys.ts';
import { API_SESSIONS_COLLECTION, type ApiSession, apiSessions } from './api-session.ts';
import {
  getApiSessionById,
  isRevoked,
  liveCutoff,
  removeSessions,
  SESSIONS_PER_TRANSACTION,
  storedSessionRefs,
  toSession,
} from './api-session-store.ts';

/** A listed session with its identity (for the view's name). */
export interface ListedSession {
  readonly session: ApiSession;
  readonly identity: Identity;
}

/** Sessions read for a page, and their total: of the stored ones (expired included) or of those that matched. */
interface Read {
  readonly items: ApiSession[];
  readonly totalCount: number;
  readonly countsExpired: boolean;
  /** Type-index entries of the page whose session items are gone (`readInIdOrder`). */
  readonly dangling?: readonly TypeIndexEntry[];
}

/**
 * One page of the live API sessions (`GET /api-sessions`), each with its identity.
 *
 * - No filter, in id order (the default, or `sort=id desc`): the keys of sessions up to offset + limit come from the
 *   type index (GSI1, in id order, the sessions' pointers), less the expired ones (a key range of each GSI3 shard,
 *   keys only: thousands per request, and few, since lists remove them), then the page's sessions are read whole; the
 *   total is the session counter less those expired sessions. The cost follows offset and limit, not how many
 *   sessions were ever stored.
 * - A filter that pins `id` or `identityId` reads just those sessions; any other filter or sort reads every live
 *   session and pages in memory.
 *
 * Expired and revoked sessions met on the way are removed (a transaction's worth per list, the counter with them).
 */
export async function listLiveApiSessions(
  deps: Deps,
  params: ListParams,
  refilled = false,
): Promise<ListPage<ListedSession>> {
  const cutoff = liveCutoff(deps);
  const direction = idOrder(params);
  // The unfiltered total needs every expired key; otherwise only those this list removes.
  const idle = idleSessionKeys(deps.store, cutoff, direction ? undefined : SESSIONS_PER_TRANSACTION);
  const [expired, read] = await Promise.all([
    idle,
    direction
      ? readInIdOrder(
          deps,
          cutoff,
          direction,
          params,
          idle.then((found) => new Set(found)),
        )
      : readFiltered(deps, cutoff, params),
  ]);
  const [{ listed, revoked }, stillStored] = await Promise.all([
    withIdentities(deps, read.items),
    storedSessionRefs(deps, expired.slice(0, SESSIONS_PER_TRANSACTION)),
  ]);
  const sweep = stillStored.filter((session) => session.lastActivityAt <= cutoff);
  const dangling = read.dangling ?? [];
  await Promise.all([
    removeSessions(deps, sweep, { expiredBy: cutoff }),
    removeSessions(deps, revoked),
    removeDanglingPointers(deps, dangling),
  ]);
  // Revoked sessions and pointers of sessions TTL deleted left the page short; they are gone now, so one more read
  // fills it.
  if ((revoked.length > 0 || dangling.length > 0) && !refilled) return listLiveApiSessions(deps, params, true);
  const counted = read.totalCount - (read.countsExpired ? expired.length : 0) - revoked.length;
  return {
    items: listed,
    pagination: {
      limit: params.limit,
      offset: params.offset,
      totalCount: Math.max(counted, listed.length > 0 ? params.offset + listed.length : 0),
    },
  };
}

/** `asc`/`desc` when the list reads in id order without a filter (GSI1's order); undefined otherwise. */
function idOrder(params: ListParams): 'asc' | 'desc' | undefined {
  if (params.where !== undefined) return undefined;
  if (params.sort.length === 0) return 'asc';
  const [only, ...rest] = params.sort;
  return only?.field === 'id' && rest.length === 0 ? only.direction : undefined;
}

/** The page in id order: the keys of live sessions up to offset + limit, then the page's sessions whole. */
async function readInIdOrder(
  deps: Deps,
  cutoff: string,
  direction: 'asc' | 'desc',
  params: ListParams,
  idle: Promise<ReadonlySet<string>>,
): Promise<Read> {
  const wanted = params.offset + params.limit;
  const [stored, keysUpToPage] = await Promise.all([
    count(deps.store, API_SESSIONS_COLLECTION),
    activeSessionKeysInIdOrder(deps.store, cutoff, direction, wanted, idle),
  ]);
  const pageEntries = keysUpToPage.slice(params.offset);
  const found = await sessionItemsOf(
    deps.store,
    pageEntries.map((entry) => entry.sessionPk),
  );
  const foundPks = new Set(found.map((item) => String(item.PK)));
  const items = found.map(toSession).filter((session) => session.lastActivityAt > cutoff);
  // An entry whose session item is gone: DynamoDB's TTL deleted the item and left its pointer (and its count).
  const dangling = pageEntries.filter((entry) => !foundPks.has(entry.sessionPk));
  return { items, totalCount: stored, countsExpired: true, dangling };
}

/** Removes the pointers of sessions TTL deleted, each counted out once; another list removing them first is fine. */
async function removeDanglingPointers(deps: Deps, entries: readonly TypeIndexEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await deps.store
    .transact(removeDanglingPointerOps(deps.store, entries.slice(0, SESSIONS_PER_TRANSACTION)))
    .catch((error: unknown) =>
      deps.logger.warn('removing the pointers of sessions TTL deleted failed; a later list removes them', {
        error: error instanceof Error ? error.message : String(error),
      }),
    );
}

/** A filtered or otherwise sorted page: the live sessions the filter can pin, or all of them, paged in memory. */
async function readFiltered(deps: Deps, cutoff: string, params: ListParams): Promise<Read> {
  const page = pageInMemory(await readLive(deps, cutoff, params), params, apiSessions.filterable);
  return { items: page.items, totalCount: page.pagination.totalCount, countsExpired: false };
}

async function readLive(deps: Deps, cutoff: string, params: ListParams): Promise<ApiSession[]> {
  const pinned = pinnedValues(params.where, ['id', 'identityId']);
  // Values too long for a key name nothing stored.
  const values = pinned?.values.filter(fitsKey) ?? [];
  if (pinned?.field === 'id') {
    const found = await mapBounded(values, 16, (id) => getApiSessionById(deps, id));
    return found.filter((session): session is ApiSession => session !== undefined && session.lastActivityAt > cutoff);
  }
  const partitions: SessionPartition[] =
    pinned?.field === 'identityId' ? values.map((identityId) => ({ identityId })) : [{ all: true }];
  const found = await mapBounded(partitions, 16, (partition) => activeSessionItems(deps.store, partition, cutoff));
  return found.flat().map(toSession);
}

/**
 * The page's sessions with their identities, apart from those that were ended (`isRevoked`): the identities and the
 * authenticators the sessions end with are one batch read, so a page costs as many requests whichever it holds.
 */
async function withIdentities(
  deps: Deps,
  sessions: readonly ApiSession[],
): Promise<{ listed: ListedSession[]; revoked: ApiSession[] }> {
  const identityIds = [...new Set(sessions.map((session) => session.identityId))];
  const authenticatorIds = [
    ...new Set(
      sessions.filter((session) => session.endsWithAuthenticator === true).map((session) => session.authenticatorId),
    ),
  ];
  const { entities } = await deps.store.readTogether([
    ...identityIds.map((id) => ({ def: identities, id })),
    ...authenticatorIds.map((id) => ({ def: authenticators, id })),
  ]);
  // The answers follow the refs: the identities' first, then the authenticators'.
  const identityById = new Map(identityIds.map((id, index) => [id, entities[index]?.doc as Identity | undefined]));
  const authenticatorById = new Map(
    authenticatorIds.map((id, index) => [id, entities[identityIds.length + index]?.doc as Authenticator | undefined]),
  );
  const now = deps.now();
  const listed: ListedSession[] = [];
  const revoked: ApiSession[] = [];
  for (const session of sessions) {
    const identity = identityById.get(session.identityId);
    const authenticator = authenticatorById.get(session.authenticatorId);
    if (identity && !isRevoked(session, identity, authenticator, now)) listed.push({ session, identity });
    else revoked.push(session);
  }
  return { listed, revoked };
}
