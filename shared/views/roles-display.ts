import { definitionOf } from '../entities/definitions.ts';
import type { BaseDocument } from '../entities/entity-definition.ts';
import type { Deps } from '../ports/deps.ts';

/** One entry of a policy's `*RolesDisplay`: the role, and for `@id` the named entity's name as `@<name>`. */
export interface NamedRole {
  readonly role: string;
  readonly name: string;
}

/** The names of the entities `@id` roles name, per collection, read once for a whole page of policies. */
export type RoleNames = (collection: string, id: string) => string | undefined;

/**
 * Reads the names of every entity the `@id` roles of these fields name (one batch read per collection), so a page of
 * policies shows its display arrays without a read per role.
 */
export async function roleNames(
  deps: Deps,
  wanted: readonly { readonly collection: string; readonly roles: readonly string[] }[],
): Promise<RoleNames> {
  const idsByCollection = new Map<string, Set<string>>();
  for (const { collection, roles } of wanted) {
    const ids = idsByCollection.get(collection) ?? new Set<string>();
    for (const role of roles) if (role.startsWith('@')) ids.add(role.slice(1));
    idsByCollection.set(collection, ids);
  }
  const names = new Map<string, string>();
  await Promise.all(
    [...idsByCollection].map(async ([collection, ids]) => {
      const def = definitionOf(collection);
      if (!def || ids.size === 0) return;
      for (const doc of await deps.store.getMany(def, [...ids])) {
        names.set(`${collection}#${doc.id}`, String((doc as BaseDocument & { name?: unknown }).name ?? doc.id));
      }
    }),
  );
  return (collection, id) => names.get(`${collection}#${id}`);
}

/** A role field's display array, as the reference shows it (an `@id` whose entity is gone shows the id). */
export function rolesDisplay(roles: readonly string[], collection: string, names: RoleNames): NamedRole[] {
  return roles.map((role) =>
    role.startsWith('@')
      ? { role, name: `@${names(collection, role.slice(1)) ?? role.slice(1)}` }
      : { role, name: role },
  );
}
