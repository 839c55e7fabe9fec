import { createHash } from 'node:crypto';
import { newToken } from '../ids.ts';

/**
 * API session tokens: `<random UUID>.<identity id, base64url>`, then `.<authenticator id, base64url>` when a stored
 * authenticator (a password, a certificate) opened the session. Neither id is a secret (they are the session's own,
 * and the token's whole text is hashed); carrying them lets a request read the session, its identity and its
 * authenticator in one batch instead of one after the other. They are never trusted on their own: the session found
 * under the token's hash must name the same ones. Tokens issued before (a bare UUID, or no authenticator part) are
 * still accepted: they carry less, and the session says the rest.
 */

/** API session tokens are stored only as this hash; the token itself exists only in the client's hands. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const encoded = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

/** A new session token for the identity, carrying the authenticator that opened the session when one did. */
export function newSessionToken(identityId: string, authenticatorId?: string): string {
  return [newToken(), encoded(identityId), ...(authenticatorId === undefined ? [] : [encoded(authenticatorId)])].join(
    '.',
  );
}

/** What a token carries beside its random part. */
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
