import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import type { Deps } from '../ports/deps.ts';
import { requiredSubstrings } from '../query/required-substrings.ts';
import { allOfType, count, filterRecords, filterRecordsOf, idsWithRole, orderedIds } from '../store/index-queries.ts';
import { documentOf } from '../store/keys.ts';
import { type CandidateKeys, candidateKeys } from './candidate-keys.ts';
import type { ListParams } from './list-params.ts';
import { type ListPage, pageInMemory } from './page-in-memory.ts';
import { matchesRoles } from './role-filter.ts';

export type { ListPage } from './page-in-memory.ts';

/**
 * The order a list can read straight from an ordered partition: ids (the default, as the reference's key order) or a
 * unique field every entity has (`sortedBy`), ascending or descending. Undefined for any other sort.
 */
function storedOrder<D extends BaseDocument>(
  def: EntityDefinition<D>,
  params: ListParams,
): { field: string; direction: 'asc' | 'desc' } | undefined {
  // Types not stored under the kit's keys (API sessions) have no ordered partitions.
  if (def.readsById === false) return undefined;
  if (params.sort.length === 0) return { field: 'id', direction: 'asc' };
  const [only, ...rest] = params.sort;
  if (!only || rest.length > 0) return undefined;
  const sorted = only.field === 'id' || (def.sortedBy as readonly string[] | undefined)?.includes(only.field);
  return sorted ? { field: only.field, direction: only.direction } : undefined;
}

/**
 * One page of a type, the way every list operation reads it.
 *
 * - No filter, no role filter, in id order or the order of a `sortedBy` field: the page's ids come from that order's
 *   partition (small items, so even a deep offset is a request or two), then only the page's entities are read; the
 *   total comes from the type's counter. The cost does not grow with the number of entities.
 * - A filter that pins `id` or a unique field (`name = "x"`, `id in [...]`) reads just those entities: the unique
 *   markers say which, whatever the size of the type.
 * - A role filter reads the role-attribute index of the named attributes, then only the entities of the page (or, with
 *   a filter or another order too, only the entities the roles select).
 * - Otherwise the type's filter records (its filterable fields, kept on each entity's id-order item) are read in
 *   parallel key ranges, filtered and sorted in memory, and only the page's entities are read.
 */
export async function listEntities<D extends BaseDocument>(
  deps: Deps,
  def: EntityDefinition<D>,
  params: ListParams,
): Promise<ListPage<D>> {
  const order = storedOrder(def, params);
  if (order && params.where === undefined && params.roleFilter === undefined) {
    const [ids, totalCount] = await Promise.all([
      orderedIds(deps.store, def.collection, order.field, order.direction, params.offset, params.limit),
      count(deps.store, def.collection),
    ]);
    return {
      items: await deps.store.getMany(def, ids, 'listPage'),
      pagination: { limit: params.limit, offset: params.offset, totalCount },
    };
  }

  const attributesField = def.roleAttributesField;
  const roleFilter = params.roleFilter;
  const keep = (doc: D) => {
    if (!roleFilter) return true;
    const attributes = attributesField ? ((doc[attributesField] as string[] | undefined) ?? []) : [];
    return matchesRoles(doc.id, attributes, roleFilter.roles, roleFilter.semantic);
  };

  const pinned = candidateKeys(def, params.where);
  if (pinned) return pageInMemory(await readCandidates(deps, def, pinned), params, def.filterable, keep);

  if (roleFilter && attributesField) {
    const ids = await idsWithRoles(deps, def, roleFilter.roles, roleFilter.semantic);
    if (order?.field === 'id' && params.where === undefined) {
      // Ids come sorted: cut the page first, then read only its entities.
      const pageIds = order.direction === 'asc' ? ids : [...ids].reverse();
      const items = await deps.store.getMany(
        def,
        pageIds.slice(params.offset, params.offset + params.limit),
        'listPage',
      );
      return { items, pagination: { limit: params.limit, offset: params.offset, totalCount: ids.length } };
    }
    return pageInMemory(await deps.store.getMany(def, ids, 'listPage'), params, def.filterable, keep);
  }

  // Filter, sort and cut on the small records, then read only the page's entities.
  // Only records that can match come back from the table: those holding the filter's `contains` needles.
  const records = await filterRecords(deps.store, def.collection, requiredSubstrings(params.where));
  const page = pageInMemory(records, params, def.filterable, (record) => keep(record as D));
  const items = await deps.store.getMany(
    def,
    page.items.map((record) => String(record.id)),
    'listPage',
  );
  return { items, pagination: page.pagination };
}

/**
 * The ids a role filter selects, from the role-attribute index: every holder of all (AllOf) or any (AnyOf) of the
 * `#attributes`, plus the `@ids`, in id order. Reads the index partitions of the named attributes only.
 */
async function idsWithRoles<D extends BaseDocument>(
  deps: Deps,
  def: EntityDefinition<D>,
  roles: readonly string[],
  semantic: 'AllOf' | 'AnyOf',
): Promise<string[]> {
  const attributes = roles.filter((role) => role.startsWith('#')).map((role) => role.slice(1));
  const named = roles.filter((role) => role.startsWith('@')).map((role) => role.slice(1));
  const holders = await Promise.all(
    attributes.map((attribute) => idsWithRole(deps.store, def.collection, attribute, 'roleFilter')),
  );
  let selected: Set<string>;
  if (holders.length === 0) selected = new Set();
  else if (semantic === 'AnyOf') selected = new Set(holders.flat());
  else {
    const [first = [], ...rest] = holders;
    const others = rest.map((ids) => new Set(ids));
    selected = new Set(first.filter((id) => others.every((set) => set.has(id))));
  }
  if (named.length > 0) {
    // Named ids count only if the entity exists.
    for (const doc of await deps.store.getMany(def, named)) selected.add(doc.id);
  }
  return [...selected].sort();
}

/** The entities whose `id` or unique field has one of the pinned values (the filter then checks everything else). */
async function readCandidates<D extends BaseDocument>(
  deps: Deps,
  def: EntityDefinition<D>,
  pinned: CandidateKeys,
): Promise<D[]> {
  const ids =
    pinned.field === 'id'
      ? pinned.values
      : await Promise.all(
          pinned.values.map((value) => deps.store.findIdByUnique(def, pinned.field as keyof D & string, value)),
        );
  return deps.store.getMany(
    def,
    ids.filter((id): id is string => id !== undefined),
  );
}

/** Every entity of a type, in id order: a type declared `readWhole`, whose documents the type index holds. */
export async function readAll<D extends BaseDocument>(deps: Deps, def: EntityDefinition<D>): Promise<D[]> {
  return (await allOfType(deps.store, def)).map((item) => def.schema.parse(documentOf(item)));
}

/** Above this many ids, reading the whole type's filter records costs less than reading the ids' records one by one. */
const AMONG_BY_KEY_LIMIT = 1000;

/**
 * One page of the entities among a known set of ids (what a reach question answered: the services an identity may
 * dial), filtered, sorted and cut like any list. In id order without a filter the page is cut from the ids and only
 * its entities are read; otherwise the ids' filter records are read (by key, or the whole type's in parallel ranges
 * when the set is large) and only the page's entities after them.
 */
export async function listEntitiesAmong<D extends BaseDocument>(
  deps: Deps,
  def: EntityDefinition<D>,
  ids: readonly string[],
  params: ListParams,
  keep: (record: Readonly<Record<string, unknown>>) => boolean = () => true,
  read: 'listPage' | 'clientGrants' = 'listPage',
): Promise<ListPage<D>> {
  const among = new Set(ids);
  const order = storedOrder(def, params);
  if (order?.field === 'id' && params.where === undefined && params.roleFilter === undefined) {
    const sorted = [...among].sort();
    if (order.direction === 'desc') sorted.reverse();
    const items = await deps.store.getMany(def, sorted.slice(params.offset, params.offset + params.limit), read);
    return { items, pagination: { limit: params.limit, offset: params.offset, totalCount: sorted.length } };
  }
  const records =
    among.size > AMONG_BY_KEY_LIMIT
      ? (await filterRecords(deps.store, def.collection, requiredSubstrings(params.where))).filter((record) =>
          among.has(String(record.id)),
        )
      : await filterRecordsOf(deps.store, def.collection, among);
  const roleFilter = params.roleFilter;
  const attributesField = def.roleAttributesField;
  const page = pageInMemory(records, params, def.filterable, (record) => {
    if (!keep(record)) return false;
    if (!roleFilter) return true;
    const attributes = attributesField ? ((record[attributesField] as string[] | undefined) ?? []) : [];
    return matchesRoles(String(record.id), attributes, roleFilter.roles, roleFilter.semantic);
  });
  const items = await deps.store.getMany(
    def,
    page.items.map((record) => String(record.id)),
    'listPage',
  );
  return { items, pagination: page.pagination };
}
