import { paginateQuery } from '@aws-sdk/lib-dynamodb';
import { newId } from '../ids.ts';
import type { Store } from './entity-store.ts';
import { keys } from './keys.ts';
import { readOptions } from './read-consistency.ts';
import type { WriteOp } from './write-op.ts';

/**
 * Recent API session changes, for the routers: a v2 router looks an SDK's API session token up in what the controller
 * pushed to it, and waits at most 5 s for it. A router's control channel lives in one endpoint process, a login in
 * any function; so every write that makes a session usable (a login that needs no more factors, the factor that
 * completes one), changes what a router checks of it (its certificates) or ends it also puts one small item here, in
 * its own transaction, and each endpoint with routers reads those written since its last read (less a grace) about
 * once a second (`ctrl-channel/api-session-sync.ts`). The items are grouped in buckets of {@link BUCKET_MS} (one partition each:
 * a poll reads one, two across a boundary) and go by TTL after {@link CHANGE_TTL_SECONDS}. They hold no secret: the
 * endpoint derives the token from the session's ids (`session-token.ts`) and checks it against the hash.
 */

export type ApiSessionChangeKind = 'added' | 'updated' | 'removed';

/** A session as a change names it: its ids (the token's parts), its token's hash (to check a derived token by). */
export interface ApiSessionChangeSubject {
  readonly id: string;
  readonly identityId: string;
  /** The authenticator the token carries: set when the session ends with it. */
  readonly authenticatorId?: string;
  readonly tokenHash: string;
}

/** One write's change: a session added or updated, or the sessions one transaction removed. */
export interface ApiSessionChange {
  readonly kind: ApiSessionChangeKind;
  readonly sessions: readonly ApiSessionChangeSubject[];
  /** When it was written (ISO-8601), and its sort key: changes read in this order are applied in it. */
  readonly at: string;
  readonly key: string;
}

/** Each bucket's span: one partition a minute, whatever the number of logins (a partition takes 1,000 writes/s). */
export const BUCKET_MS = 60_000;
/** How long a change stays: far past any poll's window; DynamoDB's TTL removes it within a day or two after. */
const CHANGE_TTL_SECONDS = 3600;

const bucketOf = (epochMs: number) => Math.floor(epochMs / BUCKET_MS);

/** The write, for the sessions' own transaction, that records their change at `now` (one item, however many). */
export function apiSessionChangeOp(
  store: Store,
  kind: ApiSessionChangeKind,
  sessions: readonly ApiSessionChangeSubject[],
  now: Date,
): WriteOp {
  const at = now.toISOString();
  return {
    item: {
      Put: {
        TableName: store.tableName,
        Item: {
          PK: keys.apiSessionChanges(bucketOf(now.getTime())),
          SK: `${at}#${newId()}`,
          kind,
          sessions: sessions.map(({ id, identityId, authenticatorId, tokenHash }) => ({
            id,
            identityId,
            ...(authenticatorId === undefined ? {} : { authenticatorId }),
            tokenHash,
          })),
          expiresAtEpoch: Math.ceil(now.getTime() / 1000) + CHANGE_TTL_SECONDS,
        },
      },
    },
  };
}

/**
 * The changes written after `after` (exclusive), oldest first, a page of at most `pageSize` at a time: from the bucket
 * of `after` up to that of `until` (a change in a later bucket is read by the next poll, whose buckets reach it).
 */
export async function* apiSessionChangePages(
  store: Store,
  after: Date,
  until: Date,
  pageSize: number,
): AsyncGenerator<ApiSessionChange[], void, undefined> {
  for (let bucket = bucketOf(after.getTime()); bucket <= bucketOf(until.getTime()); bucket += 1) {
    const query = {
      TableName: store.tableName,
      KeyConditionExpression: 'PK = :bucket AND SK > :after',
      ExpressionAttributeValues: { ':bucket': keys.apiSessionChanges(bucket), ':after': after.toISOString() },
      Limit: pageSize,
      ...readOptions('apiSessionChanges'),
    };
    for await (const page of paginateQuery({ client: store.db }, query)) {
      const changes = (page.Items ?? []).map(changeOf);
      if (changes.length > 0) yield changes;
    }
  }
}

function changeOf(item: Record<string, unknown>): ApiSessionChange {
  const key = String(item.SK);
  const sessions = Array.isArray(item.sessions) ? (item.sessions as Record<string, unknown>[]) : [];
  return {
    kind: item.kind as ApiSessionChangeKind,
    sessions: sessions.map((session) => ({
      id: String(session.id),
      identityId: String(session.identityId),
      ...(typeof session.authenticatorId === 'string' ? { authenticatorId: session.authenticatorId } : {}),
      tokenHash: String(session.tokenHash),
    })),
    at: key.slice(0, key.indexOf('#')),
    key,
  };
}
