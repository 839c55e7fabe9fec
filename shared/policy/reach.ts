import type { z } from 'zod';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import type { Store } from '../store/entity-store.ts';
import { allIds, idsWithRole, selectionsByRole } from '../store/index-queries.ts';
import { keys } from '../store/keys.ts';
import { ALL_ROLE, type PolicySemantic, parseRoles, selectsEntity } from './roles.ts';

/**
 * Who can reach what, answered at read time from two inverted indexes (nothing is materialised per identity, so no
 * write fans out with the size of the network):
 *
 * 1. **Policies selecting an entity**: one query per role the entity answers to (`@<id>`, `#all`, and `#<attr>` for
 *    each of its attributes), in parallel, over the policies' selection items; each item carries the policy's
 *    evaluation record, so the match rule is applied without reading the policies.
 * 2. **Entities a policy selects**: the role-attribute index (`ROLE#…`, AllOf intersects, AnyOf unions), the named
 *    `@ids` that still exist, or the type's id partition for `#all`; one query per distinct role of all the policies
 *    at hand, in parallel.
 *
 * So a reach question is two waves of parallel queries, whatever the number of policies and entities.
 */

/** An entity as policies see it: its id and role attributes. */
export interface Selectable {
  readonly id: string;
  readonly attributes: readonly string[];
}

/** A policy kind as the readers need it: its definition and the record its selection items carry. */
export interface PolicyKind<R extends { readonly id: string; readonly semantic: PolicySemantic }> {
  readonly def: EntityDefinition<BaseDocument>;
  readonly record: z.ZodType<R>;
}

/** The roles an entity answers to: its `@id`, `#all`, and each of its attributes. */
function rolesOf(entity: Selectable): string[] {
  return [`@${entity.id}`, ALL_ROLE, ...entity.attributes.map((attribute) => `#${attribute}`)];
}

/** The field of a policy kind that selects entities of `collection`. */
function selectorField(def: EntityDefinition<BaseDocument>, collection: string): string {
  const selector = def.selects?.fields.find((candidate) => candidate.collection === collection);
  if (!selector) throw new Error(`${def.collection} do not select ${collection}`);
  return selector.field;
}

/**
 * The policies of a kind that select an entity of `collection`, as their evaluation records, in id order. One wave of
 * parallel queries.
 */
export async function policiesSelecting<R extends { readonly id: string; readonly semantic: PolicySemantic }>(
  store: Store,
  kind: PolicyKind<R>,
  collection: string,
  entity: Selectable,
): Promise<R[]> {
  const field = selectorField(kind.def, collection);
  const found = await Promise.all(
    rolesOf(entity).map((role) => selectionsByRole(store, collection, role, kind.def.collection)),
  );
  const records = new Map<string, R>();
  for (const item of found.flat()) {
    const id = String(item.policyId);
    if (records.has(id)) continue;
    const record = kind.record.parse({ ...item, id });
    const roles = (record as unknown as Record<string, readonly string[]>)[field] ?? [];
    if (selectsEntity(roles, record.semantic, entity)) records.set(id, record);
  }
  return [...records.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Roles of one field of one policy, with the semantic they combine under. */
export interface RoleSelection {
  readonly roles: readonly string[];
  readonly semantic: PolicySemantic;
}

/**
 * The ids of `collection` that any of the selections selects, sorted. Each distinct role is read once: the type's
 * id partition for `#all` (then nothing else is needed), a role-attribute partition per `#attribute`, and one batch
 * read for the `@ids` (an id whose entity was deleted selects nothing).
 */
export async function idsSelectedByAny(
  store: Store,
  collection: string,
  selections: readonly RoleSelection[],
): Promise<string[]> {
  const parsed = selections.map((selection) => ({ ...parseRoles(selection.roles), semantic: selection.semantic }));
  if (parsed.some((selection) => selection.all)) return allIds(store, collection);

  const attributes = [...new Set(parsed.flatMap((selection) => selection.attributes))];
  const named = [...new Set(parsed.flatMap((selection) => selection.ids))];
  const [holderLists, existing] = await Promise.all([
    Promise.all(attributes.map((attribute) => idsWithRole(store, collection, attribute))),
    existingIds(store, collection, named),
  ]);
  const holders = new Map(attributes.map((attribute, i) => [attribute, holderLists[i] ?? []]));

  const selected = new Set<string>(existing);
  for (const selection of parsed) {
    if (selection.attributes.length === 0) continue;
    if (selection.semantic === 'AnyOf') {
      for (const attribute of selection.attributes) for (const id of holders.get(attribute) ?? []) selected.add(id);
    } else {
      const [first, ...rest] = selection.attributes.map((attribute) => holders.get(attribute) ?? []);
      const others = rest.map((ids) => new Set(ids));
      for (const id of first ?? []) if (others.every((set) => set.has(id))) selected.add(id);
    }
  }
  return [...selected].sort();
}

/** Which of these ids name an entity of the type (one batch read of their id-order items, keys only). */
async function existingIds(store: Store, collection: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const items = await store.batchGet(
    ids.map((id) => keys.idOrder(collection, id)),
    'SK',
  );
  return items.map((item) => String(item.SK));
}

/** The roles of `field` of each record, as selections. */
export function selectionsOf<R extends { readonly semantic: PolicySemantic }>(
  records: readonly R[],
  field: keyof R & string,
): RoleSelection[] {
  return records.map((record) => ({ roles: record[field] as readonly string[], semantic: record.semantic }));
}
