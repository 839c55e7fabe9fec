import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import {
  filterRecordOf,
  linkKey,
  referenceValues,
  roleAttributesOf,
  selectionKeysOf,
  uniqueKeysOf,
} from '../store/entity-store.ts';
import { keys, storedAttributes } from '../store/keys.ts';

/** Which of the kit's derived items an expected item is, for the findings' wording. */
export type DerivedKind = 'unique marker' | 'id-order item' | 'reference link' | 'role member' | 'policy selection';

/**
 * An item the kit keeps for an entity besides the entity itself, as its current document says it should be: the
 * integrity scan's one source of what "consistent" means, derived from the declaration exactly as the store's writes
 * derive what they put. `compared` names the attributes that must match (beyond the key).
 */
export interface ExpectedItem {
  readonly kind: DerivedKind;
  readonly item: Readonly<Record<string, unknown>> & { readonly PK: string; readonly SK: string };
  readonly compared: readonly string[];
}

export function itemKeyOf(item: { readonly PK: unknown; readonly SK: unknown }): string {
  return `${String(item.PK)}|${String(item.SK)}`;
}

/** Every derived item an entity should have (filter packs apart: see `expectedPackRecord`). */
export function expectedItemsOf<D extends BaseDocument>(def: EntityDefinition<D>, doc: D): ExpectedItem[] {
  const expected: ExpectedItem[] = [];
  for (const key of uniqueKeysOf(def)) {
    const value = key.valueOf(doc);
    if (value !== undefined) {
      const item = { ...keys.unique(def.collection, key.name, value), entityId: doc.id };
      expected.push({ kind: 'unique marker', item, compared: ['entityId'] });
    }
  }
  const record = storedAttributes(filterRecordOf(def, doc));
  expected.push({
    kind: 'id-order item',
    item: { ...record, ...keys.idOrder(def.collection, doc.id) },
    compared: Object.keys(record),
  });
  for (const reference of def.references ?? []) {
    if (reference.onTargetDelete === 'none') continue;
    for (const target of referenceValues(doc, reference)) {
      const item = { ...linkKey(def, reference, target, doc.id), onTargetDelete: reference.onTargetDelete };
      expected.push({ kind: 'reference link', item, compared: ['onTargetDelete'] });
    }
  }
  for (const attribute of roleAttributesOf(def, doc)) {
    expected.push({ kind: 'role member', item: keys.roleMember(def.collection, attribute, doc.id), compared: [] });
  }
  if (def.selects) {
    const selectionRecord = storedAttributes(def.selects.recordOf(doc));
    for (const { key } of selectionKeysOf(def, doc).values()) {
      const item = { ...selectionRecord, ...key, policyId: doc.id, policyCollection: def.collection };
      expected.push({
        kind: 'policy selection',
        item,
        compared: [...Object.keys(selectionRecord), 'policyId', 'policyCollection'],
      });
    }
  }
  return expected;
}

/** Whether a stored item holds what the expected one says (the key already matched). */
export function matches(expected: ExpectedItem, actual: Readonly<Record<string, unknown>>): boolean {
  return expected.compared.every((name) => JSON.stringify(actual[name]) === JSON.stringify(expected.item[name]));
}
