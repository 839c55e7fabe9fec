import type { z } from 'zod';
import type { PolicySemantic } from '../entities/policy-semantics.ts';
import type { Store } from '../store/entity-store.ts';
import { allIds, idsWithRole, selectionsByRole } from '../store/index-queries.ts';
import { documentOf, fitsKey, keys } from '../store/keys.ts';
import { ALL_ROLE, parseRoles, selectsEntity } from './roles.ts';

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

/** The part of a policy type's definition readers use: its collection and its selector fields. */
export interface PolicyDefinition {
  readonly collection: string;
  readonly selects?: {
    readonly fields: readonly { readonly field: string; readonly collection: string }[];
    readonly recordFields: readonly string[];
  };
}

/** A policy kind as the readers need it: its definition and the record its selection items carry. */
export interface PolicyKind<R extends { readonly id: string; readonly semantic: PolicySemantic }> {
  readonly def: PolicyDefinition;
  readonly record: z.ZodType<R>;
}

/** The roles an entity answers to: its `@id`, `#all`, and each of its attributes. */
function rolesOf(entity: Selectable): string[] {
  return [`@${entity.id}`, ALL_ROLE, ...entity.attributes.map((attribute) => `#${attribute}`)];
}

/** The field of a policy kind that selects entities of `collection`. */
function selectorField(def: PolicyDefinition, collection: string): string {
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
  read: 'policyReach' | 'clientGrants' = 'policyReach',
): Promise<R[]> {
  const field = selectorField(kind.def, collection);
  const found = await Promise.all(
    rolesOf(entity).map((role) =>
      selectionsByRole(
        store,
        collection,
        role,
        { collection: kind.def.collection, recordFields: kind.def.selects?.recordFields ?? [] },
        read,
      ),
    ),
  );
  const records = new Map<string, R>();
  const unreadable = new Set<string>();
  for (const item of found.flat()) {
    const id = String(item.id);
    if (records.has(id)) continue;
    const parsed = kind.record.safeParse(item);
    if (parsed.success) records.set(id, parsed.data);
    else unreadable.add(id);
  }
  // A selection item whose record does not parse (damaged, or of a layout a later build changed): the policy itself
  // is read instead, so the answer stands; the integrity fix rewrites the item.
  if (unreadable.size > 0) {
    const policies = await store.batchGet(
      [...unreadable].map((id) => keys.entity(kind.def.collection, id)),
      undefined,
      read,
    );
    for (const item of policies) {
      const record = kind.record.parse(documentOf(item));
      records.set(record.id, record);
    }
  }
  return [...records.values()]
    .filter((record) => {
      const roles = (record as unknown as Record<string, readonly string[]>)[field] ?? [];
      return selectsEntity(roles, record.semantic, entity);
    })
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Roles of one field of one policy, with the semantic they combine under. */
export interface RoleSelection {
  readonly roles: readonly string[];
  readonly semantic: PolicySemantic;
}

/** How a `RoleResolver` reads. */
export interface ResolverOptions {
  /** What the selections are resolved for: an access decision (`policyReach`, the default) or a client's grants. */
  readonly read?: 'policyReach' | 'clientGrants';
  /**
   * Take `@ids` as naming entities that exist, without reading them: deleting an entity takes its `@id` out of every
   * policy (`policies-naming.ts`), so a policy names only entities that exist or are being deleted. For readers that
   * read the selected entities anyway and drop those not found (a page of services); a batch read costs a read unit
   * per id, found or not.
   */
  readonly namedIdsExist?: boolean;
}

/**
 * Resolves role selections to ids, reading each distinct role of a collection once however many selections name it:
 * the type's id partition for `#all`, a role-attribute partition per `#attribute`, one batch read for the `@ids` (an
 * id whose entity was deleted selects nothing; see `namedIdsExist`). Selections resolved together (`Promise.all`)
 * issue their reads in one parallel wave.
 */
export class RoleResolver {
  private readonly store: Store;
  private readonly options: ResolverOptions;
  private readonly reads = new Map<string, Promise<readonly string[]>>();
  /** `@ids` asked for in this tick, read together in one batch when the tick ends. */
  private pendingNamed: {
    collection: string;
    id: string;
    resolve: (exists: boolean) => void;
    reject: (error: unknown) => void;
  }[] = [];

  constructor(store: Store, options: ResolverOptions = {}) {
    this.store = store;
    this.options = options;
  }

  /** The ids one selection selects, sorted. */
  async ids(collection: string, selection: RoleSelection): Promise<string[]> {
    const { all, ids, attributes } = parseRoles(selection.roles);
    const read = this.options.read ?? 'policyReach';
    if (all) return [...(await this.read(collection, ALL_ROLE, () => allIds(this.store, collection, read)))];
    const [holderLists, existing] = await Promise.all([
      Promise.all(
        attributes.map((attribute) =>
          this.read(collection, `#${attribute}`, () => idsWithRole(this.store, collection, attribute, read)),
        ),
      ),
      Promise.all(ids.map((id) => this.read(collection, `@${id}`, () => this.named(collection, id)))),
    ]);
    const selected = new Set<string>(existing.flat());
    if (holderLists.length > 0) {
      if (selection.semantic === 'AnyOf') for (const list of holderLists) for (const id of list) selected.add(id);
      else {
        const [first = [], ...rest] = holderLists;
        const others = rest.map((list) => new Set(list));
        for (const id of first) if (others.every((set) => set.has(id))) selected.add(id);
      }
    }
    return [...selected].sort();
  }

  /** The ids any of the selections selects, sorted. */
  async idsOfAny(collection: string, selections: readonly RoleSelection[]): Promise<string[]> {
    const lists = await Promise.all(selections.map((selection) => this.ids(collection, selection)));
    return [...new Set(lists.flat())].sort();
  }

  /**
   * Whether a named entity exists, as a one-id list. Every `@id` asked for while selections are being resolved
   * together (the same tick) is read in one batch, not one request each.
   */
  private named(collection: string, id: string): Promise<readonly string[]> {
    if (!fitsKey(id)) return Promise.resolve([]);
    if (this.options.namedIdsExist) return Promise.resolve([id]);
    if (this.pendingNamed.length === 0) queueMicrotask(() => void this.readNamed());
    return new Promise<boolean>((resolve, reject) => {
      this.pendingNamed.push({ collection, id, resolve, reject });
    }).then((exists) => (exists ? [id] : []));
  }

  private async readNamed(): Promise<void> {
    const batch = this.pendingNamed;
    this.pendingNamed = [];
    try {
      const items = await this.store.batchGet(
        batch.map(({ collection, id }) => keys.idOrder(collection, id)),
        'PK, SK',
        this.options.read ?? 'policyReach',
      );
      const found = new Set(items.map((item) => `${String(item.PK)}|${String(item.SK)}`));
      for (const { collection, id, resolve } of batch) {
        const key = keys.idOrder(collection, id);
        resolve(found.has(`${key.PK}|${key.SK}`));
      }
    } catch (error) {
      for (const { reject } of batch) reject(error);
    }
  }

  private read(collection: string, role: string, load: () => Promise<readonly string[]>): Promise<readonly string[]> {
    const key = `${collection}|${role}`;
    let found = this.reads.get(key);
    if (!found) {
      found = load();
      this.reads.set(key, found);
    }
    return found;
  }
}

/** The roles of `field` of each record, as selections. */
export function selectionsOf<R extends { readonly semantic: PolicySemantic }>(
  records: readonly R[],
  field: keyof R & string,
): RoleSelection[] {
  return records.map((record) => ({ roles: record[field] as readonly string[], semantic: record.semantic }));
}

/**
 * The ids among `entities` (already read, with their attributes) that any of the selections selects, sorted: the
 * reference's match rule (`selectsEntity`) applied in memory, each selection parsed once.
 */
export function idsSelectedAmong(entities: readonly Selectable[], selections: readonly RoleSelection[]): string[] {
  const named = new Set<string>();
  const anyOf = new Set<string>();
  const allOf = new Map<string, readonly string[]>();
  for (const { roles, semantic } of selections) {
    const { all, ids, attributes } = parseRoles(roles);
    if (all) return entities.map((entity) => entity.id).sort();
    for (const id of ids) named.add(id);
    if (attributes.length === 0) continue;
    if (semantic === 'AnyOf' || attributes.length === 1) for (const attribute of attributes) anyOf.add(attribute);
    else allOf.set([...attributes].sort().join('\n'), attributes);
  }
  const selected = entities.filter((entity) => {
    if (named.has(entity.id)) return true;
    if (entity.attributes.some((attribute) => anyOf.has(attribute))) return true;
    if (allOf.size === 0) return false;
    const own = new Set(entity.attributes);
    for (const attributes of allOf.values()) if (attributes.every((attribute) => own.has(attribute))) return true;
    return false;
  });
  return selected.map((entity) => entity.id).sort();
}
