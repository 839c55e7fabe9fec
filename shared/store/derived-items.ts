import type { BaseDocument, EntityDefinition, Reference, Selector, UniqueKey } from '../entities/entity-definition.ts';
import { type ApiError, invalidField } from '../errors/api-error.ts';
import { recordItem } from './filter-records.ts';
import { DOCUMENT_INDEX_KEYS, documentOf, fitsKey, itemKindOf, keys, MAX_KEY_VALUE_BYTES } from './keys.ts';
import { addToCatalog, pruneCatalog } from './role-catalog.ts';
import type { TableClient } from './table-client.ts';
import { type ItemKey, itemOps, type WriteOp } from './write-op.ts';

/**
 * The items the kit keeps for an entity besides the entity itself (unique markers, the id-order item, reference links,
 * role members, policy selections), described once: each kind says which items a document implies, whose a stored
 * item is, and how it is written and removed. The store's create, replace and delete write exactly what
 * {@link derivedItems} says (`derivedItemOps`), and the integrity scan checks the table against the same answer, so a
 * kind added here is written and checked alike.
 */

type Item = Readonly<Record<string, unknown>>;

/** An entity a derived item belongs to. */
export interface Owner {
  readonly collection: string;
  readonly id: string;
}

/** A kind of derived item. */
export interface DerivedKind {
  /** How findings name it (`unique marker`). */
  readonly name: string;
  /** The items of this kind the document implies. */
  readonly itemsOf: <D extends BaseDocument>(def: EntityDefinition<D>, doc: D) => readonly DerivedItem[];
  /** The entity a stored item of this kind belongs to; undefined when the item is not of this kind. */
  readonly ownerOf: (item: Item) => Owner | undefined;
  /**
   * Work after a commit that added (`added`) or removed an item of this kind: what must not be written inside the
   * transaction because many writers share it (the role catalog).
   */
  readonly afterCommit?: (table: TableClient, key: ItemKey, change: 'added' | 'removed') => Promise<void>;
  /**
   * One owner at a time: a stored item that differs belongs to another entity (a unique value), so it is claimed on
   * add (the write fails if it exists) and never overwritten by a repair.
   */
  readonly exclusive?: boolean;
}

/** An item a document implies. */
export interface DerivedItem {
  readonly kind: DerivedKind;
  /** The whole item, key included. */
  readonly item: Item & { readonly PK: string; readonly SK: string };
  /** The attributes (beyond the key) that must match what is stored. */
  readonly compared: readonly string[];
  /** For an exclusive kind: the value claimed, and the error when another entity holds it. */
  readonly claim?: { readonly field: string; readonly value: string; readonly conflict: () => ApiError };
  /** An entity that must exist when the item is added (a policy's `@id` role), and the error when it does not. */
  readonly requires?: { readonly collection: string; readonly id: string; readonly onMissing: () => ApiError };
}

export function itemKeyOf(item: { readonly PK: unknown; readonly SK: unknown }): string {
  return `${String(item.PK)}|${String(item.SK)}`;
}

function fieldValue(doc: BaseDocument, field: string): string | undefined {
  const value = (doc as unknown as Record<string, unknown>)[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Every uniqueness rule of a type: its unique fields (duplicates name the field) and its computed unique keys. */
export function uniqueKeysOf<D extends BaseDocument>(def: EntityDefinition<D>): readonly UniqueKey<D>[] {
  const fields = def.unique.map(
    (field): UniqueKey<D> => ({
      name: field,
      valueOf: (doc) => fieldValue(doc, field),
      conflict: (value) =>
        invalidField(field, `duplicate value '${value}' in unique index on ${def.collection} store`, value),
    }),
  );
  return [...fields, ...(def.uniqueKeys ?? [])];
}

/**
 * The ids a reference holds: one for a string field, each distinct one for a list; empty values name nothing. A
 * dotted field is followed through nested objects; a missing or null object along the way holds none.
 */
export function referenceValues<D extends BaseDocument>(doc: D, reference: Reference<D>): string[] {
  let value: unknown = doc;
  for (const part of reference.field.split('.')) {
    const holder = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
    value = Object.hasOwn(holder, part) ? (holder as Record<string, unknown>)[part] : undefined;
  }
  const ids = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  return [...new Set(ids.filter((id): id is string => typeof id === 'string' && id !== ''))];
}

/** Where a link is kept: in the target's partition, so the target's delete reads its links strongly consistently. */
export function linkKey<D extends BaseDocument>(
  def: EntityDefinition<D>,
  reference: Reference<D>,
  target: string,
  id: string,
) {
  return { PK: keys.entity(reference.collection, target).PK, SK: `REFBY#${def.collection}#${id}#${reference.field}` };
}

export function roleAttributesOf<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): Set<string> {
  const field = def.roleAttributesField;
  const value = field ? doc[field] : undefined;
  return new Set(Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
}

/**
 * What lists filter and sort on, and nothing else: the document's filterable fields (`def.filterable`; a dotted name
 * such as `tags.env` keeps its whole top-level field; an alias is resolved before filtering, so adds nothing) and role
 * attributes. Kept on the entity's id-order item, in step with every write: a write outside the kit that changes one
 * of these fields must update the record too.
 */
export function filterRecordOf<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): Record<string, unknown> {
  const source = doc as unknown as Record<string, unknown>;
  const record: Record<string, unknown> = { id: doc.id };
  const stored = Object.keys(def.filterable).filter((name) => typeof def.filterable[name] === 'string');
  const fields = [...stored, ...(def.roleAttributesField ? [def.roleAttributesField] : [])];
  for (const name of fields) {
    const field = name.split('.')[0]!;
    if (Object.hasOwn(source, field)) record[field] = source[field];
  }
  return record;
}

/**
 * The entity's id-order item, carrying its filter record (`filterRecordOf`, see `filter-records.ts`) and the type's
 * `idOrderFields`: lists whose filter pins nothing, and readers of a whole small type (a session's edge routers), read
 * these small items instead of whole entities.
 */
export function idOrderItemOf<D extends BaseDocument>(def: EntityDefinition<D>, doc: D) {
  const record = filterRecordOf(def, doc);
  const source = doc as unknown as Record<string, unknown>;
  for (const field of def.idOrderFields ?? []) if (Object.hasOwn(source, field)) record[field] = source[field];
  return recordItem(def.collection, { ...record, id: doc.id });
}

/** A selection item's key, the selector it comes from, and the id an `@id` role names. */
export interface SelectionKey {
  readonly key: { readonly PK: string; readonly SK: string };
  readonly selector: Selector<BaseDocument>;
  readonly namedId?: string;
}

/** A policy's selection items by `PK|SK`: one per distinct role of each selector field. */
export function selectionKeysOf<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): Map<string, SelectionKey> {
  const found = new Map<string, SelectionKey>();
  for (const selector of def.selects?.fields ?? []) {
    for (const role of (doc[selector.field] as readonly string[] | undefined) ?? []) {
      if (!fitsKey(role)) continue;
      const key = keys.selection(selector.collection, role, def.collection, doc.id);
      const namedId = role.startsWith('@') ? role.slice(1) : undefined;
      found.set(itemKeyOf(key), {
        key,
        selector: selector as unknown as Selector<BaseDocument>,
        ...(namedId !== undefined ? { namedId } : {}),
      });
    }
  }
  return found;
}

/** The parts of a partition key after its prefix, split on `#`. */
function pkParts(item: Item): string[] {
  return String(item.PK).split('#');
}

const uniqueMarkers: DerivedKind = {
  name: 'unique marker',
  exclusive: true,
  itemsOf: (def, doc) =>
    uniqueKeysOf(def).flatMap((key) => {
      const value = key.valueOf(doc);
      if (value === undefined) return [];
      const carried = def.markerCarries?.(doc) ?? {};
      const item = { ...keys.unique(def.collection, key.name, value), ...carried, entityId: doc.id };
      return [
        {
          kind: uniqueMarkers,
          item,
          compared: ['entityId', ...Object.keys(carried)],
          claim: { field: key.name, value, conflict: () => key.conflict(value) },
        },
      ];
    }),
  ownerOf: (item) =>
    itemKindOf(String(item.PK)) === 'unique' ? { collection: pkParts(item)[1]!, id: String(item.entityId) } : undefined,
};

const idOrderItems: DerivedKind = {
  name: 'id-order item',
  itemsOf: (def, doc) => {
    const item = idOrderItemOf(def, doc);
    return [{ kind: idOrderItems, item, compared: Object.keys(item).filter((name) => name !== 'PK' && name !== 'SK') }];
  },
  ownerOf: (item) =>
    itemKindOf(String(item.PK)) === 'idOrder' ? { collection: pkParts(item)[1]!, id: String(item.SK) } : undefined,
};

const referenceLinks: DerivedKind = {
  name: 'reference link',
  // A target that can never be deleted (`none`) keeps no links: it is only checked to exist when written.
  itemsOf: (def, doc) =>
    (def.references ?? [])
      .filter((reference) => reference.onTargetDelete !== 'none')
      .flatMap((reference) =>
        referenceValues(doc, reference).map((target) => ({
          kind: referenceLinks,
          item: { ...linkKey(def, reference, target, doc.id), onTargetDelete: reference.onTargetDelete },
          compared: ['onTargetDelete'],
        })),
      ),
  ownerOf: (item) => {
    const sk = String(item.SK);
    if (itemKindOf(String(item.PK)) !== 'entity-or-link' || !sk.startsWith('REFBY#')) return undefined;
    const [, collection, id] = sk.split('#');
    return { collection: collection!, id: id! };
  },
};

/** The collection and attribute of a role member's partition, `ROLE#<collection>#<attribute>`. */
export function roleOfMember(member: ItemKey): { collection: string; attribute: string } {
  const [, collection = '', ...attribute] = String(member.PK).split('#');
  return { collection, attribute: attribute.join('#') };
}

const roleMembers: DerivedKind = {
  name: 'role member',
  itemsOf: (def, doc) =>
    [...roleAttributesOf(def, doc)].map((attribute) => ({
      kind: roleMembers,
      item: keys.roleMember(def.collection, attribute, doc.id),
      compared: [],
    })),
  ownerOf: (item) =>
    itemKindOf(String(item.PK)) === 'roleMember' ? { collection: pkParts(item)[1]!, id: String(item.SK) } : undefined,
  // The catalog entry follows its members after the commit (see `role-catalog.ts`).
  afterCommit: (table, key, change) => {
    const { collection, attribute } = roleOfMember(key);
    return change === 'added' ? addToCatalog(table, collection, attribute) : pruneCatalog(table, collection, attribute);
  },
};

/** The attribute of a selection item holding its policy's evaluation record, as JSON text. */
export const SELECTION_RECORD = 'record';

/**
 * A policy's evaluation record as its selection items keep it: the values of its `recordFields` as a JSON array in one
 * attribute, without the id (the sort key holds it) or any field name. Readers read every selection item of the roles
 * an entity answers to, so the item is kept small: about a hundred bytes for a policy of a few roles, where one
 * attribute per field (and the id and collection again) took two and a half times that.
 */
export function selectionRecordText<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): string {
  if (!def.selects) return '[]';
  const record = def.selects.recordOf(doc);
  return JSON.stringify(def.selects.recordFields.map((field) => record[field] ?? null));
}

/**
 * A selection item's record, by field: from its JSON array (`recordFields` order), or, for an item written before the
 * record was one attribute, from its attributes.
 */
export function selectionRecordOf(
  item: Readonly<Record<string, unknown>>,
  recordFields: readonly string[],
): Record<string, unknown> {
  const text = item[SELECTION_RECORD];
  if (typeof text !== 'string') return documentOf(item);
  const values = JSON.parse(text) as unknown;
  if (!Array.isArray(values)) return values as Record<string, unknown>;
  return Object.fromEntries(recordFields.map((field, i) => [field, values[i]]));
}

const policySelections: DerivedKind = {
  name: 'policy selection',
  itemsOf: (def, doc) => {
    if (!def.selects) return [];
    const record = selectionRecordText(def, doc);
    return [...selectionKeysOf(def, doc).values()].map(({ key, selector, namedId }) => ({
      kind: policySelections,
      item: { ...key, [SELECTION_RECORD]: record },
      compared: [SELECTION_RECORD],
      ...(namedId === undefined
        ? {}
        : {
            requires: {
              collection: selector.collection,
              id: namedId,
              onMissing: () =>
                invalidField(
                  selector.field,
                  `no ${selector.plural} found with the given ids`,
                  doc[selector.field as keyof typeof doc],
                ),
            },
          }),
    }));
  },
  ownerOf: (item) => {
    if (itemKindOf(String(item.PK)) !== 'selection') return undefined;
    const sk = String(item.SK);
    const at = sk.indexOf('#');
    return { collection: sk.slice(0, at), id: sk.slice(at + 1) };
  },
};

/** The kinds, in the order their writes go into a transaction: claims first, so a duplicate is what a write reports. */
const DERIVED_KINDS: DerivedKind[] = [uniqueMarkers, referenceLinks, roleMembers, policySelections, idOrderItems];

/**
 * Adds a kind (one more item every entity of some type implies), written by the kit and checked by the scan from then
 * on; returns its removal. The table's own kinds are listed above: this is for a kind declared elsewhere.
 */
export function registerDerivedKind(kind: DerivedKind): () => void {
  DERIVED_KINDS.push(kind);
  return () => {
    const at = DERIVED_KINDS.indexOf(kind);
    if (at >= 0) DERIVED_KINDS.splice(at, 1);
  };
}

/** Every derived item the document implies. */
export function derivedItems<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): DerivedItem[] {
  return DERIVED_KINDS.flatMap((kind) => kind.itemsOf(def, doc));
}

/** The kind of a stored item, when it is a derived item of some entity. */
export function derivedKindOf(item: Item): { kind: DerivedKind; owner: Owner } | undefined {
  for (const kind of DERIVED_KINDS) {
    const owner = kind.ownerOf(item);
    if (owner) return { kind, owner };
  }
  return undefined;
}

/** Whether a stored item holds what the derived one says (the key already matched). */
export function matches(derived: DerivedItem, actual: Item): boolean {
  return derived.compared.every((name) => JSON.stringify(actual[name]) === JSON.stringify(derived.item[name]));
}

/**
 * A check, inside a transaction, that an entity exists and is not being deleted (see `Reference`): what every write
 * that comes to point at an entity commits with.
 */
export function entityExistsOp(tableName: string, collection: string, id: string, onMissing: () => ApiError): WriteOp {
  // An id too long for a key names nothing; DynamoDB would refuse the whole transaction otherwise.
  if (!fitsKey(id)) throw onMissing();
  return {
    item: {
      ConditionCheck: {
        TableName: tableName,
        Key: keys.entity(collection, id),
        ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(deletingUntil) OR deletingUntil < :now)',
        ExpressionAttributeValues: { ':now': new Date().toISOString() },
      },
    },
    onConditionFailed: onMissing,
  };
}

/**
 * The write that puts a derived item: claimed (refused while another entity holds it) for an exclusive kind, with its
 * kind's after-commit work. A claimed value too long for a key is the caller's 400, on every path that writes one (a
 * name, an identity's externalId from a certificate or JWT claim), never a 500.
 */
/**
 * A derived item the entity already holds, to be rewritten under its own key (out of date, or changed by an update):
 * nothing to claim again.
 */
export function rewriteOf(derived: DerivedItem): DerivedItem {
  const { claim: _held, ...rewrite } = derived;
  return rewrite;
}

export function putDerivedOp(table: TableClient, derived: DerivedItem): WriteOp {
  const { claim, kind } = derived;
  if (claim && !fitsKey(claim.value)) {
    throw invalidField(
      claim.field,
      `must be at most ${MAX_KEY_VALUE_BYTES} bytes to be unique`,
      claim.value.slice(0, 64),
    );
  }
  const put = itemOps.put(table.tableName, { ...derived.item });
  const claimed: WriteOp = claim
    ? {
        item: { Put: { ...put.item.Put!, ConditionExpression: 'attribute_not_exists(PK)' } },
        onConditionFailed: claim.conflict,
      }
    : put;
  return kind.afterCommit
    ? { ...claimed, afterCommit: () => kind.afterCommit!(table, derived.item, 'added') }
    : claimed;
}

/**
 * The write that removes a derived item of `kind` by key (`ifStored`: only while it is still there), with its kind's
 * after-commit work.
 */
export function removeDerivedOp(
  table: TableClient,
  kind: DerivedKind,
  key: ItemKey,
  options: { readonly ifStored?: boolean } = {},
): WriteOp {
  const removal = itemOps.remove(table.tableName, key, options);
  return kind.afterCommit ? { ...removal, afterCommit: () => kind.afterCommit!(table, key, 'removed') } : removal;
}

/**
 * The writes that move an entity's derived items from `before` to `after` (either absent: a create, a delete): items
 * no longer implied removed, new ones added (after a check that the entity they require exists), changed ones
 * rewritten, unchanged ones untouched.
 */
export function derivedItemOps<D extends BaseDocument>(
  table: TableClient,
  def: EntityDefinition<D>,
  before: D | undefined,
  after: D | undefined,
): WriteOp[] {
  const old = new Map((before ? derivedItems(def, before) : []).map((derived) => [itemKeyOf(derived.item), derived]));
  const next = after ? derivedItems(def, after) : [];
  const nextKeys = new Set(next.map((derived) => itemKeyOf(derived.item)));
  const ops: WriteOp[] = [];
  for (const [key, derived] of old) {
    if (!nextKeys.has(key)) ops.push(removeDerivedOp(table, derived.kind, derived.item));
  }
  for (const derived of next) {
    const previous = old.get(itemKeyOf(derived.item));
    if (previous && matches(derived, previous.item)) continue;
    if (!previous && derived.requires) {
      const { collection, id, onMissing } = derived.requires;
      ops.push(entityExistsOp(table.tableName, collection, id, onMissing));
    }
    if (!previous) {
      ops.push(putDerivedOp(table, derived));
      continue;
    }
    ops.push(putDerivedOp(table, rewriteOf(derived)));
  }
  return ops;
}

/**
 * The index keys of an entity's document item: the type index (GSI1) for a type read whole (`readWhole`), the parent
 * index (GSI2) for a child (`parentOf`); nothing else enters an index, since every copy costs a write unit per KB.
 */
export function documentIndexKeys<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): Record<string, string> {
  const parent = def.parentOf?.(doc);
  return {
    ...(def.readWhole ? { GSI1PK: keys.typeIndex(def.collection), GSI1SK: doc.id } : {}),
    ...(parent
      ? { GSI2PK: keys.parentIndex(parent.collection, parent.id), GSI2SK: `${def.collection}#${doc.id}` }
      : {}),
  };
}

/** Whether a document's item carries exactly the index keys its type's layout gives it. */
export function indexKeysAsLaid<D extends BaseDocument>(
  item: Readonly<Record<string, unknown>>,
  def: EntityDefinition<D>,
  doc: D,
): boolean {
  const want = documentIndexKeys(def, doc);
  return DOCUMENT_INDEX_KEYS.every((name) => item[name] === want[name]);
}

/**
 * The write that gives a document's item the index keys of its layout, touching nothing else of it (counters such as
 * `failedAttempts` move without its version), if its version is still `version`.
 */
export function layIndexKeysOp<D extends BaseDocument>(
  tableName: string,
  def: EntityDefinition<D>,
  doc: D,
  version: number,
): WriteOp {
  const want = documentIndexKeys(def, doc);
  const set = DOCUMENT_INDEX_KEYS.filter((name) => want[name] !== undefined);
  const removed = DOCUMENT_INDEX_KEYS.filter((name) => want[name] === undefined);
  const clauses = [
    ...(set.length > 0 ? [`SET ${set.map((name) => `${name} = :${name}`).join(', ')}`] : []),
    ...(removed.length > 0 ? [`REMOVE ${removed.join(', ')}`] : []),
  ];
  return {
    item: {
      Update: {
        TableName: tableName,
        Key: keys.entity(def.collection, doc.id),
        UpdateExpression: clauses.join(' '),
        ConditionExpression: 'version = :version',
        ExpressionAttributeValues: {
          ':version': version,
          ...Object.fromEntries(set.map((name) => [`:${name}`, want[name]])),
        },
      },
    },
  };
}
