import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Deps } from '../deps.ts';
import { newId, newToken } from '../ids.ts';
import { listChildren } from '../store/children.ts';
import { keys, LAYOUT_ATTRIBUTES } from '../store/keys.ts';
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
            GSI2PK: keys.parentIndex('identities', session.identityId),
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
  const doc: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item)) if (!LAYOUT_ATTRIBUTES.includes(key)) doc[key] = value;
  return apiSessionSchema.parse(doc);
}

/**
 * The live session for a token, with its activity refreshed; undefined when unknown or idle past the timeout
 * (DynamoDB's TTL deletes lazily, so expiry is checked here on every read).
 */
export async function touchApiSession(deps: Deps, token: string): Promise<ApiSession | undefined> {
  const key = sessionKey(hashToken(token));
  const { Item } = await deps.store.db.send(
    new GetCommand({ TableName: deps.store.tableName, Key: key, ConsistentRead: true }),
  );
  if (!Item) return undefined;
  const session = toSession(Item);
  const now = deps.now();
  if (expiresAt(deps, new Date(session.lastActivityAt)) <= now) {
    await deleteApiSession(deps, session);
    return undefined;
  }
  const lastActivityAt = now.toISOString();
  await deps.store.db
    .send(
      new UpdateCommand({
        TableName: deps.store.tableName,
        Key: key,
        UpdateExpression: 'SET lastActivityAt = :at, expiresAtEpoch = :ttl',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':at': lastActivityAt, ':ttl': Math.ceil(expiresAt(deps, now).getTime() / 1000) },
      }),
    )
    .catch((error: unknown) => {
      // Deleted between the read and the write (logout, admin delete): the session is gone, so is this request's.
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return undefined;
      throw error;
    });
  return { ...session, lastActivityAt };
}

/** The session with this id (admin operations), or undefined. */
export async function getApiSessionById(deps: Deps, id: string): Promise<ApiSession | undefined> {
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

/** The sessions of an identity (GSI2), for `hasApiSession`, disable and delete. */
export async function listApiSessionsOfIdentity(deps: Deps, identityId: string): Promise<ApiSession[]> {
  const children = await listChildren(deps, 'identities', identityId, API_SESSIONS_COLLECTION);
  return children.map((child) => apiSessionSchema.parse(child.doc));
}
