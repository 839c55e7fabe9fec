import { createHash } from 'node:crypto';

/** API session tokens are stored only as this hash; the token itself exists only in the client's hands. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
