import type { Authenticator } from '../entities/authenticator.ts';
import { entityRef, selfLinks } from './entity-ref.ts';

/** An authenticator as the API shows it: never its password hash or failed-attempt count. */
export function authenticatorView(authenticator: Authenticator, identityName: string) {
  const { passwordHash: _passwordHash, failedAttempts: _failedAttempts, ...rest } = authenticator;
  return {
    ...rest,
    _links: selfLinks('authenticators', authenticator.id),
    identity: entityRef('identities', authenticator.identityId, identityName),
  };
}
