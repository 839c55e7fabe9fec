import { type Identity, identities, newIdentity } from '#shared/entities/identity.ts';
import { newId } from '#shared/ids.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';

export const ROLE_ATTRIBUTES = ['sales', 'eng', 'ops', 'emea', 'us'] as const;

/** Transactions in flight while seeding: enough to keep DynamoDB Local busy on two cores. */
export const SEED_CONCURRENCY = 16;

/** `prefix-000123`: the name of the entity seeded at `index`, sorting as the indexes do. */
export function paddedName(prefix: string, index: number): string {
  return `${prefix}-${String(index).padStart(6, '0')}`;
}

/** The indexes `from` (inclusive) to `to` (exclusive). */
export function seedIndexes(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, offset) => from + offset);
}

/** `bench-identity-000123`: the name of the identity seeded at `index`. */
export function seededName(index: number): string {
  return paddedName('bench-identity', index);
}

/** One or two of `ROLE_ATTRIBUTES`, varied by index. */
export function seededRoleAttributes(index: number): string[] {
  const first = ROLE_ATTRIBUTES[index % ROLE_ATTRIBUTES.length]!;
  const second = ROLE_ATTRIBUTES[(index * 7 + 3) % ROLE_ATTRIBUTES.length]!;
  return first === second ? [first] : [first, second];
}

/** A deterministic, varied identity: one or two role attributes, one admin in fifty, some tags and app data. */
export function seededIdentity(index: number, now: string): Identity {
  const roleAttributes = seededRoleAttributes(index);
  return newIdentity({
    id: newId(),
    name: seededName(index),
    createdAt: now,
    tags: index % 3 === 0 ? { team: roleAttributes[0]!, costCenter: `cc-${index % 17}` } : {},
    isAdmin: index % 50 === 0,
    externalId: index % 4 === 0 ? `ext-${index}` : null,
    roleAttributes,
    appData: index % 5 === 0 ? { site: `site-${index % 11}` } : {},
  });
}

/**
 * Seeds identities `from` (inclusive) to `to` (exclusive) through the store: the same transaction a create writes
 * (item, unique markers, reference checks and links, counter), without HTTP, validation or session checks.
 */
export async function seedIdentities(deps: Deps, from: number, to: number): Promise<void> {
  const now = deps.now().toISOString();
  await mapBounded(seedIndexes(from, to), SEED_CONCURRENCY, (index) =>
    deps.store.transact(deps.store.createOps(identities, seededIdentity(index, now))),
  );
}
