/**
 * The role attributes this function instance last saw each identity with: a guess, never trusted, of the keys an
 * operation reads with its caller (`CallerReading.alongside`), so they go in the batch that reads the session and the
 * identity (one wave, not two). The identity read in that batch says which were right; keys its actual attributes add
 * are read after it. Bounded: the oldest guesses go first.
 */
const MAX_IDENTITIES = 20_000;

const seen = new Map<string, readonly string[]>();

/** The attributes last seen for the identity; none when it has not been seen by this instance. */
export function roleAttributesSeen(identityId: string): readonly string[] {
  return seen.get(identityId) ?? [];
}

/** Remembers the identity's attributes for its next request, forgetting the least recently seen past the bound. */
export function rememberRoleAttributes(identity: {
  readonly id: string;
  readonly roleAttributes: readonly string[];
}): void {
  seen.delete(identity.id);
  seen.set(identity.id, identity.roleAttributes);
  if (seen.size > MAX_IDENTITIES) seen.delete(seen.keys().next().value as string);
}
