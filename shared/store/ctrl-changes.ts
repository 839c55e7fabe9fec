import { paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { EndedSessions, RouterNotice } from '../entities/router-notice.ts';
import { newId } from '../ids.ts';
import { keys } from './keys.ts';
import { type MeshNotice, meshNoticeOf } from './mesh-notices.ts';
import { readOptions } from './read-consistency.ts';
import type { TableClient } from './table-client.ts';
import type { WriteOp } from './write-op.ts';

/**
 * Recent changes the routers' control channel endpoints pass on: a router's channel lives in one endpoint process, a
 * change in any function. A v2 router looks an SDK's API session token up in what the controller pushed to it (and
 * waits at most 5 s for it), closes an SDK whose identity leaves it, and must lose its channel when it is disabled.
 * So every write that makes a session usable (a login that needs no more factors, the factor that completes one),
 * changes what a router checks of it (its certificates), ends sessions (one by one, or all of an identity's or an
 * authenticator's at once), changes which identities may use which routers, ends a router, or changes what a circuit
 * is routed by (a service's terminators, a router's cost) also puts one small
 * item here, in its own transaction (and so does every router connection's start and end, and every write of a link
 * between routers: `mesh-notices.ts`), and each endpoint with routers reads those written since its last read (less a
 * grace) about once a second (`ctrl-channel/ctrl-change-poll.ts`). The items are grouped in buckets of
 * {@link BUCKET_MS} (one partition each: a poll reads one, two across a boundary) and go by TTL after
 * {@link CHANGE_TTL_SECONDS}. They hold no secret: the endpoint derives a session's token from its ids
 * (`session-token.ts`) and checks it against the hash.
 */

export type ApiSessionChangeKind = 'added' | 'updated' | 'removed';

export type { EndedSessions };

/** A session as a change names it: its ids (the token's parts), its token's hash (to check a derived token by). */
export interface ApiSessionChangeSubject {
  readonly id: string;
  readonly identityId: string;
  /** The authenticator the token carries: set when the session ends with it. */
  readonly authenticatorId?: string;
  readonly tokenHash: string;
}

/** What one change says. */
export type CtrlChangeBody =
  | {
      /** Sessions one write added, updated or removed. */
      readonly kind: ApiSessionChangeKind;
      readonly sessions: readonly ApiSessionChangeSubject[];
    }
  | RouterNotice
  // Routers' presence and links, which endpoints tell each other (`mesh-notices.ts`).
  | MeshNotice;

/** A change as read back: what it says, when it was written (ISO-8601, its sort key's start) and its key. */
export type CtrlChange = CtrlChangeBody & { readonly at: string; readonly key: string };

/** Every kind this build writes and reads, each once (the record's type keeps the list whole when a kind is added). */
const EVERY_KIND: Readonly<Record<CtrlChange['kind'], true>> = {
  added: true,
  updated: true,
  removed: true,
  ended: true,
  reach: true,
  certificates: true,
  'router-ended': true,
  services: true,
  'session-removed': true,
  terminators: true,
  'router-cost': true,
  'router-connected': true,
  'router-disconnected': true,
  link: true,
};

/**
 * Whether this build knows a change's kind. What an endpoint keeps in memory is dropped whole by a kind it does not
 * know (a newer build's, during a deploy), since it cannot tell what that change made stale.
 */
export const isKnownChangeKind = (kind: string): boolean => Object.hasOwn(EVERY_KIND, kind);

/** Each bucket's span: one partition a minute, whatever the number of logins (a partition takes 1,000 writes/s). */
export const BUCKET_MS = 60_000;
/** How long a change stays: far past any poll's window; DynamoDB's TTL removes it within a day or two after. */
const CHANGE_TTL_SECONDS = 3600;

const bucketOf = (epochMs: number) => Math.floor(epochMs / BUCKET_MS);

/**
 * The write, for the change's own transaction, that records it at `now` (one item): what it says, as it says it (the
 * document client leaves absent fields out).
 */
export function ctrlChangeOp(store: Pick<TableClient, 'tableName'>, body: CtrlChangeBody, now: Date): WriteOp {
  const at = now.toISOString();
  const Item = {
    PK: keys.ctrlChanges(bucketOf(now.getTime())),
    SK: `${at}#${newId()}`,
    ...body,
    expiresAtEpoch: Math.ceil(now.getTime() / 1000) + CHANGE_TTL_SECONDS,
  };
  return { item: { Put: { TableName: store.tableName, Item } } };
}

/** The write that records sessions added, updated or removed (one item, however many). */
export function apiSessionChangeOp(
  store: Pick<TableClient, 'tableName'>,
  kind: ApiSessionChangeKind,
  sessions: readonly ApiSessionChangeSubject[],
  now: Date,
): WriteOp {
  return ctrlChangeOp(store, { kind, sessions }, now);
}

/**
 * The changes written after `after` (exclusive), oldest first, a page of at most `pageSize` at a time: from the bucket
 * of `after` up to that of `until` (a change in a later bucket is read by the next poll, whose buckets reach it).
 * An item this version does not understand (written by a newer one) is passed over.
 */
export async function* ctrlChangePages(
  store: Pick<TableClient, 'db' | 'tableName'>,
  after: Date,
  until: Date,
  pageSize: number,
): AsyncGenerator<CtrlChange[], void, undefined> {
  for (let bucket = bucketOf(after.getTime()); bucket <= bucketOf(until.getTime()); bucket += 1) {
    const query = {
      TableName: store.tableName,
      KeyConditionExpression: 'PK = :bucket AND SK > :after',
      ExpressionAttributeValues: { ':bucket': keys.ctrlChanges(bucket), ':after': after.toISOString() },
      Limit: pageSize,
      ...readOptions('ctrlChanges'),
    };
    for await (const page of paginateQuery({ client: store.db }, query)) {
      const changes = (page.Items ?? []).flatMap((item) => {
        const change = changeOf(item);
        return change ? [change] : [];
      });
      if (changes.length > 0) yield changes;
    }
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function changeOf(item: Record<string, unknown>): CtrlChange | undefined {
  const key = String(item.SK);
  const stamp = { at: key.slice(0, key.indexOf('#')), key };
  const body = bodyOf(item);
  return body && { ...body, ...stamp };
}

function bodyOf(item: Record<string, unknown>): CtrlChangeBody | undefined {
  const kind = item.kind;
  const identityId = text(item.identityId);
  switch (kind) {
    case 'added':
    case 'updated':
    case 'removed': {
      const sessions = Array.isArray(item.sessions) ? (item.sessions as Record<string, unknown>[]) : [];
      return { kind, sessions: sessions.map(subjectOf) };
    }
    case 'ended': {
      const ended = (item.ended ?? {}) as Record<string, unknown>;
      const endedIdentityId = text(ended.identityId);
      const endedAt = text(ended.endedAt);
      const authenticatorId = text(ended.authenticatorId);
      if (endedIdentityId === undefined) return undefined;
      return {
        kind,
        ended: {
          identityId: endedIdentityId,
          ...(endedAt === undefined ? {} : { endedAt }),
          ...(authenticatorId === undefined ? {} : { authenticatorId }),
        },
      };
    }
    case 'reach':
      return { kind, ...(identityId === undefined ? {} : { identityId }) };
    case 'certificates':
      return identityId === undefined ? undefined : { kind, identityId };
    case 'router-ended': {
      const routerId = text(item.routerId);
      return routerId === undefined ? undefined : { kind, routerId };
    }
    case 'services':
      return { kind };
    case 'session-removed': {
      const sessionId = text(item.sessionId);
      return sessionId === undefined ? undefined : { kind, sessionId };
    }
    case 'terminators': {
      const serviceId = text(item.serviceId);
      return serviceId === undefined ? undefined : { kind, serviceId };
    }
    case 'router-cost': {
      const routerId = text(item.routerId);
      return routerId === undefined ? undefined : { kind, routerId };
    }
    default:
      return meshNoticeOf(item);
  }
}

function subjectOf(session: Record<string, unknown>): ApiSessionChangeSubject {
  return {
    id: String(session.id),
    identityId: String(session.identityId),
    ...(typeof session.authenticatorId === 'string' ? { authenticatorId: session.authenticatorId } : {}),
    tokenHash: String(session.tokenHash),
  };
}
