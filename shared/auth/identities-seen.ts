import { AUTHENTICATOR_FIELDS, type Identity } from '../entities/identity.ts';
import { RecentMap } from '../recent-map.ts';

/**
 * What this function instance last saw of each identity: a guess, never trusted, of what the read of a caller needs
 * beside its session and identity, so it goes in the one batch that reads them (one wave, not two). The role attributes
 * give the keys an operation reads with its caller (`CallerReading.alongside`); whether the identity named the
 * session's authenticator as live says whether the authenticator itself must be read (`isRevoked`). The identity read
 * in that batch says which guesses were right; what they missed is read after it. Bounded: the oldest go first.
 */
const MAX_IDENTITIES = 20_000;

interface Seen {
  readonly roleAttributes: readonly string[];
  /** The authenticators its item named as live. */
  readonly authenticatorIds: readonly string[];
}

const seen = new RecentMap<string, Seen>(MAX_IDENTITIES);

/** The attributes last seen for the identity; none when it has not been seen by this instance. */
export function roleAttributesSeen(identityId: string): readonly string[] {
  return seen.get(identityId)?.roleAttributes ?? [];
}

/** Whether the identity, when last seen, named this authenticator as live (so it need not be read with it). */
export function namedAuthenticatorSeen(identityId: string, authenticatorId: string): boolean {
  return seen.get(identityId)?.authenticatorIds.includes(authenticatorId) ?? false;
}

/** Remembers the identity for its next request, forgetting the least recently seen past the bound. */
export function rememberIdentity(identity: Identity): void {
  const authenticatorIds = Object.values(AUTHENTICATOR_FIELDS).flatMap((field) => identity[field] ?? []);
  seen.set(identity.id, { roleAttributes: identity.roleAttributes, authenticatorIds });
}
