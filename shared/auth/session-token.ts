import { createHash, createHmac } from 'node:crypto';

/**
 * API session tokens: `<secret>.<identity id, base64url>`, then `.<authenticator id, base64url>` when a stored
 * authenticator (a password, a certificate) opened the session. Neither id is a secret (they are the session's own,
 * and the token's whole text is hashed); carrying them lets a request read the session, its identity and its
 * authenticator in one batch instead of one after the other. They are never trusted on their own: the session found
 * under the token's hash must name the same ones.
 *
 * The secret is HMAC-SHA256 of the session's id under the token key (`api-session-token-key.ts`, derived from the
 * server key), base64url (43 characters): random to anyone without the key, and derivable by whoever holds it, so the
 * routers' control channel can hand a v2 router each live session's token (which the router looks SDKs up by) while
 * the table keeps the token's hash alone. Tokens issued before (a random UUID as the secret, or a bare UUID) are still
 * accepted; they cannot be derived, so routers never learn them: their holder logs in again.
 */

/** API session tokens are stored only as this hash; the token itself exists only in the client's hands. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const encoded = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

/** What names the MAC's input as an API session token's, so the key can never be made to MAC anything else alike. */
const MAC_LABEL = 'ziti-api-session-token\0';

/** What a session's token is made of: its id (the MAC's input) and the ids the token carries. */
export interface TokenParts {
  readonly sessionId: string;
  readonly identityId: string;
  /** The stored authenticator that opened the session, when the session ends with it; none otherwise. */
  readonly authenticatorId?: string;
}

/** The token of a session: the MAC of its id under `tokenKey`, then the ids it carries. */
export function sessionToken(tokenKey: Uint8Array, parts: TokenParts): string {
  const secret = createHmac('sha256', tokenKey).update(`${MAC_LABEL}${parts.sessionId}`, 'utf8').digest('base64url');
  const carried = parts.authenticatorId === undefined ? [] : [encoded(parts.authenticatorId)];
  return [secret, encoded(parts.identityId), ...carried].join('.');
}

/**
 * A stored session's token, derived again; undefined when the session's token was not made so (issued before tokens
 * were derivable, or under another server key): the stored hash tells.
 */
export function derivedSessionToken(
  tokenKey: Uint8Array,
  session: TokenParts & { readonly tokenHash: string },
): string | undefined {
  const token = sessionToken(tokenKey, session);
  return hashToken(token) === session.tokenHash ? token : undefined;
}

/** What a token carries beside its secret part. */
export interface TokenIds {
  readonly identityId: string;
  /** The stored authenticator that opened its session; none for an ext-jwt or CA-claim login, or an older token. */
  readonly authenticatorId?: string;
}

function decoded(part: string | undefined): string | undefined {
  if (part === undefined || !/^[A-Za-z0-9_-]+$/.test(part)) return undefined;
  const id = Buffer.from(part, 'base64url').toString('utf8');
  return id === '' ? undefined : id;
}

/** The ids a token carries, or undefined (a token of the oldest form, or not one of ours). */
export function idsOfToken(token: string): TokenIds | undefined {
  const [, identityPart, authenticatorPart, ...more] = token.split('.');
  const identityId = decoded(identityPart);
  if (identityId === undefined || more.length > 0) return undefined;
  if (authenticatorPart === undefined) return { identityId };
  const authenticatorId = decoded(authenticatorPart);
  return authenticatorId === undefined ? undefined : { identityId, authenticatorId };
}
