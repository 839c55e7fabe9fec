import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ApiError } from '../errors/api-error.ts';
import type { Store } from './entity-store.ts';
import { keys } from './keys.ts';
import type { WriteOp } from './write-op.ts';

/**
 * The OIDC provider's state between requests (`docs/oidc-design.md`, E.5), in the single table, each item gone by TTL
 * and every step written on a condition, so that no auth request is logged into twice, no code is exchanged twice and
 * no refresh token is spent twice, whichever function instance serves each step:
 * - an auth request (`/authorize`), then the login that completes it: the API session it opened;
 * - a code (`/authorize/callback`) under its SHA-256, naming its auth request.
 * A session's live refresh token is kept on its API session item (`refreshJti`), replaced by each refresh.
 */

/** How long an auth request and its code live: the reference's 10 minutes. */
export const AUTH_REQUEST_SECONDS = 600;

/** What `/authorize` was asked, kept for the login and the code's exchange. */
export interface OidcAuthRequest {
  readonly id: string;
  readonly clientId: string;
  readonly redirectUri: string;
  /** The PKCE S256 challenge the code's exchange must answer. */
  readonly codeChallenge: string;
  readonly state: string | undefined;
  readonly nonce: string | undefined;
  readonly scopes: readonly string[];
  /** The issuer the request reached (`https://<host>/oidc`): the tokens name it. */
  readonly issuer: string;
  /** Epoch seconds after which it is refused (the TTL deletes it later). */
  readonly expiresAtEpoch: number;
  /** Set by the primary login: the API session it opened (partial until its second factors are given). */
  readonly login?: OidcLogin;
}

/** What a primary login of an auth request found, which the tokens carry (`z_` claims, `amr`, `auth_time`). */
export interface OidcLogin {
  /** The API session's id (`z_asid`): the session row every request and refresh reads. */
  readonly apiSessionId: string;
  readonly identityId: string;
  /** The authenticator (or external JWT signer) the primary login used (`z_authid`). */
  readonly authenticatorId: string;
  readonly isAdmin: boolean;
  readonly externalId: string | null;
  readonly configTypes: readonly string[];
  /** SHA-1 fingerprints of the certificate a certificate login presented (`z_cfs`). */
  readonly certFingerprints: readonly string[];
  /** How the login was made (`amr`: `pwd`, `mtls`, `ext-jwt`, then `totp`). */
  readonly amr: readonly string[];
  /** When the login was made, epoch seconds. */
  readonly authTime: number;
  readonly remoteAddress: string;
}

const STRING_FIELDS = ['id', 'clientId', 'redirectUri', 'codeChallenge', 'issuer'] as const;

function authRequestOf(item: Record<string, unknown> | undefined, now: Date): OidcAuthRequest | undefined {
  if (!item || STRING_FIELDS.some((field) => typeof item[field] !== 'string')) return undefined;
  const expiresAtEpoch = Number(item.expiresAtEpoch);
  if (!(expiresAtEpoch * 1000 > now.getTime())) return undefined;
  return {
    id: item.id as string,
    clientId: item.clientId as string,
    redirectUri: item.redirectUri as string,
    codeChallenge: item.codeChallenge as string,
    state: typeof item.state === 'string' ? item.state : undefined,
    nonce: typeof item.nonce === 'string' ? item.nonce : undefined,
    scopes: Array.isArray(item.scopes) ? (item.scopes as string[]) : [],
    issuer: item.issuer as string,
    expiresAtEpoch,
    ...(item.login && typeof item.login === 'object' ? { login: item.login as OidcLogin } : {}),
  };
}

export async function putAuthRequest(store: Store, request: OidcAuthRequest): Promise<void> {
  await store.db.send(
    new PutCommand({
      TableName: store.tableName,
      Item: { ...keys.oidc('auth', request.id), ...withoutUndefined(request) },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
}

/** The auth request while it lives (read strongly: its login may have just been written); undefined otherwise. */
export async function readAuthRequest(store: Store, id: string, now: Date): Promise<OidcAuthRequest | undefined> {
  if (!isItemId(id)) return undefined;
  const read = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: keys.oidc('auth', id), ConsistentRead: true }),
  );
  return authRequestOf(read.Item, now);
}

/**
 * The write that records an auth request's login, in the transaction that opens its API session: only on a request
 * still there and not logged into yet, so a replayed login opens nothing.
 */
export function authRequestLoginOp(store: Store, id: string, login: OidcLogin): WriteOp {
  return {
    item: {
      Update: {
        TableName: store.tableName,
        Key: keys.oidc('auth', id),
        UpdateExpression: 'SET login = :login',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(login)',
        ExpressionAttributeValues: { ':login': login },
      },
    },
    onConditionFailed: () => new ApiError('INVALID_AUTH', { message: 'The auth request was already logged into.' }),
  };
}

/**
 * Adds a method to the `amr` of an auth request's login (`totp` once its code is given), in the transaction that gives
 * the session that factor; only while the request lives and is logged into.
 */
export function authRequestAmrOp(store: Store, id: string, amr: string): WriteOp {
  return {
    item: {
      Update: {
        TableName: store.tableName,
        Key: keys.oidc('auth', id),
        UpdateExpression: 'SET login.amr = list_append(login.amr, :amr)',
        ConditionExpression: 'attribute_exists(login) AND attribute_not_exists(codeIssuedAt)',
        ExpressionAttributeValues: { ':amr': [amr] },
      },
    },
    onConditionFailed: () => new ApiError('INVALID_AUTH', { message: 'The auth request already has its code.' }),
  };
}

/** Marks an auth request's code issued, once: a second callback of the same request gets no second code. */
export function codeIssuedOp(store: Store, id: string, at: string): WriteOp {
  return {
    item: {
      Update: {
        TableName: store.tableName,
        Key: keys.oidc('auth', id),
        UpdateExpression: 'SET codeIssuedAt = :at',
        ConditionExpression: 'attribute_exists(login) AND attribute_not_exists(codeIssuedAt)',
        ExpressionAttributeValues: { ':at': at },
      },
    },
    onConditionFailed: () => new ApiError('INVALID_AUTH', { message: 'The auth request already has its code.' }),
  };
}

/** A code for a logged-in auth request, kept by its hash alone; it lives as long as its auth request. */
export function putCodeOp(store: Store, codeHash: string, request: OidcAuthRequest): WriteOp {
  return {
    item: {
      Put: {
        TableName: store.tableName,
        Item: { ...keys.oidc('code', codeHash), authRequestId: request.id, expiresAtEpoch: request.expiresAtEpoch },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  };
}

/**
 * The auth request a code was issued for, while both live; the code is not spent by reading it ({@link
 * spendCodeOp} does, in the transaction that issues the tokens).
 */
export async function authRequestOfCode(
  store: Store,
  codeHash: string,
  now: Date,
): Promise<OidcAuthRequest | undefined> {
  const read = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: keys.oidc('code', codeHash), ConsistentRead: true }),
  );
  const authRequestId = read.Item?.authRequestId;
  if (typeof authRequestId !== 'string' || !(Number(read.Item?.expiresAtEpoch) * 1000 > now.getTime())) {
    return undefined;
  }
  return readAuthRequest(store, authRequestId, now);
}

/** Spends a code: good once. Its auth request goes with it. */
export function spendCodeOps(store: Store, codeHash: string, authRequestId: string): WriteOp[] {
  return [
    {
      item: {
        Delete: {
          TableName: store.tableName,
          Key: keys.oidc('code', codeHash),
          ConditionExpression: 'attribute_exists(PK)',
        },
      },
      onConditionFailed: () => new ApiError('INVALID_AUTH', { message: 'The code was already used.' }),
    },
    { item: { Delete: { TableName: store.tableName, Key: keys.oidc('auth', authRequestId) } } },
  ];
}

/** Ids of ours are short printable text; anything else names no item (and must not reach a key). */
function isItemId(id: string): boolean {
  return /^[A-Za-z0-9_-]{1,128}$/.test(id);
}

function withoutUndefined<T extends object>(value: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined));
}
