import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Deps } from '../deps.ts';
import { newId, newToken } from '../ids.ts';
import { MAX_TRANSACTION_ITEMS } from '../store/entity-store.ts';
import { documentOf, fitsKey, keys } from '../store/keys.ts';
import type { WriteOp } from '../store/write-op.ts';
import { API_SESSIONS_COLLECTION, type ApiSession, apiSessionSchema } from './api-session.ts';
import { hashToken } from './session-token.ts';

/**
 * API sessions are keyed by the hash of their token, so the per-request lookup is one strongly consistent read.
 * A second item maps the session id to that hash for the admin operations that address sessions by id.
 */
const sessionKey = (tokenHash: string) => ({ PK: `APISESSION#${tokenHash}`, SK: 'META' });
const idKey = (id: string) => ({ PK: `${API_SESSIONS_COLLECTION}#${id}`, SK: 'ID' });

export interface NewApiSession {
  readonly identityId: string;
  readonly authenticatorId: string;
  readonly ipAddress: string;
  readonly configTypes: readonly string[];
  readonly isMfaRequired: boolean;
}

function expiresAt(deps: Deps, lastActivityAt: Date): Date {
  return new Date(lastActivityAt.getTime() + deps.config.apiSessionTimeoutMinutes * 60_000);
}

/** When the session ends unless used again, and how many seconds that is from its last activity. */
export function sessionExpiry(deps: Deps, session: ApiSession): { expiresAt: string; expirationSeconds: number } {
  return {
    expiresAt: expiresAt(deps, new Date(session.lastActivityAt)).toISOString(),
    expirationSeconds: deps.config.apiSessionTimeoutMinutes * 60,
  };
}

/** The writes that store a new session; the token is returned once and only its hash is kept. */
export function createApiSessionOps(
  deps: Deps,
  input: NewApiSession,
): { token: string; session: ApiSession; ops: WriteOp[] } {
  const token = newToken();
  const now = deps.now();
  const session: ApiSession = {
    id: newId(),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    tags: {},
    identityId: input.identityId,
    authenticatorId: input.authenticatorId,
    ipAddress: input.ipAddress,
    configTypes: [...input.configTypes],
    isMfaRequired: input.isMfaRequired,
    isMfaComplete: false,
    isCertExtendRequested: false,
    isCertKeyRollRequested: false,
    improperClientCertChain: false,
    lastActivityAt: now.toISOString(),
    tokenHash: hashToken(token),
  };
  const { tableName } = deps.store;
  const ops: WriteOp[] = [
    {
      item: {
        Put: {
          TableName: tableName,
          Item: {
            ...sessionKey(session.tokenHash),
            GSI1PK: keys.typeIndex(API_SESSIONS_COLLECTION),
            GSI1SK: session.id,
            GSI2PK: keys.sessionsIndex(session.identityId),
            GSI2SK: `${API_SESSIONS_COLLECTION}#${session.id}`,
            expiresAtEpoch: Math.ceil(expiresAt(deps, now).getTime() / 1000),
            ...session,
          },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
    },
    { item: { Put: { TableName: tableName, Item: { ...idKey(session.id), tokenHash: session.tokenHash } } } },
  ];
  return { token, session, ops };
}

function toSession(item: Record<string, unknown>): ApiSession {
  return apiSessionSchema.parse(documentOf(item));
}

/**
 * The live session for a token, with its activity refreshed in the same request (one conditional UpdateItem that
 * returns the session); undefined when the token is unknown or the session has been idle past the timeout. DynamoDB's
 * TTL deletes lazily, so an idle session found here is deleted now.
 */
export async function touchApiSession(deps: Deps, token: string): Promise<ApiSession | undefined> {
  const key = sessionKey(hashToken(token));
  const now = deps.now();
  const cutoff = new Date(now.getTime() - deps.config.apiSessionTimeoutMinutes * 60_000).toISOString();
  try {
    const { Attributes } = await deps.store.db.send(
      new UpdateCommand({
        TableName: deps.store.tableName,
        Key: key,
        UpdateExpression: 'SET lastActivityAt = :at, expiresAtEpoch = :ttl',
        // ISO-8601 UTC timestamps of one length order as text the way they order in time.
        ConditionExpression: 'attribute_exists(PK) AND lastActivityAt > :cutoff',
        ExpressionAttributeValues: {
          ':at': now.toISOString(),
          ':ttl': Math.ceil(expiresAt(deps, now).getTime() / 1000),
          ':cutoff': cutoff,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes ? toSession(Attributes) : undefined;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
  }
  const { Item } = await deps.store.db.send(
    new GetCommand({ TableName: deps.store.tableName, Key: key, ConsistentRead: true }),
  );
  if (Item) await deleteApiSession(deps, toSession(Item));
  return undefined;
}

/** The session with this id (admin operations), or undefined. */
export async function getApiSessionById(deps: Deps, id: string): Promise<ApiSession | undefined> {
  if (!fitsKey(id)) return undefined;
  const { Item: pointer } = await deps.store.db.send(
    new GetCommand({ TableName: deps.store.tableName, Key: idKey(id), ConsistentRead: true }),
  );
  if (typeof pointer?.tokenHash !== 'string') return undefined;
  const { Item } = await deps.store.db.send(
    new GetCommand({ TableName: deps.store.tableName, Key: sessionKey(pointer.tokenHash), ConsistentRead: true }),
  );
  return Item ? toSession(Item) : undefined;
}

/** The writes that end a session; its token stops working at once. */
export function deleteApiSessionOps(deps: Deps, session: ApiSession): WriteOp[] {
  const { tableName } = deps.store;
  return [
    { item: { Delete: { TableName: tableName, Key: sessionKey(session.tokenHash) } } },
    { item: { Delete: { TableName: tableName, Key: idKey(session.id) } } },
  ];
}

export async function deleteApiSession(deps: Deps, session: ApiSession): Promise<void> {
  await deps.store.transact(deleteApiSessionOps(deps, session));
}

function sessionsQuery(deps: Deps, identityId: string, start?: Record<string, unknown>, projection?: string) {
  return new QueryCommand({
    ...(projection ? { ProjectionExpression: projection } : {}),
    TableName: deps.store.tableName,
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :sessions',
    ExpressionAttributeValues: { ':sessions': keys.sessionsIndex(identityId) },
    ExclusiveStartKey: start,
  });
}

/** Every stored session of an identity (idle ones included), for disable and delete. */
export async function listApiSessionsOfIdentity(deps: Deps, identityId: string): Promise<ApiSession[]> {
  const sessions: ApiSession[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await deps.store.db.send(sessionsQuery(deps, identityId, start));
    for (const item of page.Items ?? []) sessions.push(toSession(item));
    start = page.LastEvaluatedKey;
  } while (start);
  return sessions;
}

/** Whether the identity has a session not yet idle past the timeout; stops at the first page that has one. */
export async function hasLiveApiSession(deps: Deps, identityId: string): Promise<boolean> {
  const cutoff = deps.now().getTime() - deps.config.apiSessionTimeoutMinutes * 60_000;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await deps.store.db.send(sessionsQuery(deps, identityId, start, 'lastActivityAt'));
    if ((page.Items ?? []).some((item) => Date.parse(String(item.lastActivityAt)) > cutoff)) return true;
    start = page.LastEvaluatedKey;
  } while (start);
  return false;
}

/**
 * The writes that end an identity's sessions, to commit with a change of the identity (disable, delete) that leaves
 * `room` items in its transaction. Sessions beyond that room are ended first, in their own transactions: ending a
 * session a moment early is harmless, leaving one alive is not.
 */
export async function endSessionsOps(deps: Deps, identityId: string, room: number): Promise<WriteOp[]> {
  const ops = (await listApiSessionsOfIdentity(deps, identityId)).flatMap((session) =>
    deleteApiSessionOps(deps, session),
  );
  const early = ops.slice(0, Math.max(0, ops.length - Math.max(0, room)));
  for (let i = 0; i < early.length; i += MAX_TRANSACTION_ITEMS) {
    await deps.store.transact(early.slice(i, i + MAX_TRANSACTION_ITEMS));
  }
  return ops.slice(early.length);
}
