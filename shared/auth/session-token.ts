import { createHash } from 'node:crypto';
import { newToken } from '../ids.ts';

/**
 * API session tokens: `<random UUID>.<identity id, base64url>`. The identity id is no secret (it is the session's
 * own identity, and the token's whole text is hashed); carrying it lets a request read the session and its identity
 * in one batch instead of one after the other. It is never trusted on its own: the session found under the token's
 * hash must name the same identity. Tokens issued before (a bare UUID) carry none and are still accepted: their
 * identity is read after their session.
 */

/** API session tokens are stored only as this hash; the token itself exists only in the client's hands. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new session token for the identity. */
export function newSessionToken(identityId: string): string {
  return `${newToken()}.${Buffer.from(identityId, 'utf8').toString('base64url')}`;
}

/** The identity id a token carries, or undefined (a token of the older form, or not one of ours). */
export function identityIdOfToken(token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot < 0) return undefined;
  const encoded = token.slice(dot + 1);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return undefined;
  const id = Buffer.from(encoded, 'base64url').toString('utf8');
  return id === '' ? undefined : id;
}
