import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import type { Deps } from '../ports/deps.ts';

/** Resolves referenced entities' names for EntityRefs, reading each id once per lookup (one per page of a list). */
export type NameLookup = (id: string) => Promise<string>;

export function nameLookup<D extends BaseDocument & { name: string }>(
  deps: Deps,
  def: EntityDefinition<D>,
): NameLookup {
  const names = new Map<string, Promise<string>>();
  return (id) => {
    let name = names.get(id);
    if (!name) {
      name = deps.store.get(def, id).then((stored) => stored?.doc.name ?? '');
      names.set(id, name);
    }
    return name;
  };
}
