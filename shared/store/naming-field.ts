import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import type { ApiError } from '../errors/api-error.ts';
import { itemKeyOf } from './derived-items.ts';
import { keys } from './keys.ts';
import type { TransactItem, WriteOp } from './write-op.ts';

/**
 * The fields that hold a live entity's id on another entity's item (`EntityDefinition.namedOn`): set by the entity's
 * create, removed by its delete, in their transaction. Each is one small update of the holder's item that also moves
 * its version, so a replace of the holder planned from an older read fails its version check instead of writing the
 * old value back. One transaction may not touch an item twice: `mergeNamings` folds these updates into the
 * transaction's own write of the holder (its create, replace, delete, or the check that it exists).
 */

/** A create's or delete's change of the field naming its entity, tagged for `mergeNamings`. */
type Naming = NonNullable<WriteOp['naming']>;

/** Whether the holder of one naming field is still there (a delete of a child whose holder is gone names nothing). */
const HOLDER_STORED = 'attribute_exists(PK)';

/** The change of the field naming an entity, for its create (`set`) or delete (`remove`); none when it has no field. */
export function namingOps<D extends BaseDocument>(
  tableName: string,
  def: EntityDefinition<D>,
  doc: D,
  action: 'set' | 'remove',
): WriteOp[] {
  const holder = def.namedOn?.(doc);
  if (!holder) return [];
  const naming: Naming = { holder, value: action === 'set' ? doc.id : undefined };
  return [{ ...updateOf(tableName, [naming], { expression: HOLDER_STORED, values: {} }), naming }];
}

/** The changes of a replace: the old field removed and the new one set, when the document moved its naming field. */
export function renamingOps<D extends BaseDocument>(
  tableName: string,
  def: EntityDefinition<D>,
  before: D,
  after: D,
): WriteOp[] {
  const [was, is] = [def.namedOn?.(before), def.namedOn?.(after)];
  if (was?.collection === is?.collection && was?.id === is?.id && was?.field === is?.field) return [];
  return [...namingOps(tableName, def, before, 'remove'), ...namingOps(tableName, def, after, 'set')];
}

interface Condition {
  readonly expression: string;
  readonly names?: Readonly<Record<string, string>>;
  readonly values: Readonly<Record<string, unknown>>;
}

/** One update of a holder: its naming fields set or removed and its version moved, if the condition holds. */
function updateOf(
  tableName: string,
  namings: readonly Naming[],
  condition: Condition,
  onConditionFailed?: () => ApiError,
): WriteOp {
  const names: Record<string, string> = { ...condition.names, '#namingVersion': 'version' };
  const values: Record<string, unknown> = { ...condition.values, ':namingOne': 1 };
  const sets: string[] = [];
  const removes: string[] = [];
  for (const [index, { holder, value }] of namings.entries()) {
    names[`#naming${index}`] = holder.field;
    if (value === undefined) removes.push(`#naming${index}`);
    else {
      values[`:naming${index}`] = value;
      sets.push(`#naming${index} = :naming${index}`);
    }
  }
  const first = namings[0]!.holder;
  return {
    item: {
      Update: {
        TableName: tableName,
        Key: keys.entity(first.collection, first.id),
        UpdateExpression: [
          sets.length > 0 ? `SET ${sets.join(', ')}` : '',
          removes.length > 0 ? `REMOVE ${removes.join(', ')}` : '',
          'ADD #namingVersion :namingOne',
        ]
          .filter(Boolean)
          .join(' '),
        ConditionExpression: condition.expression,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
    ...(onConditionFailed ? { onConditionFailed } : {}),
  };
}

/** The key of the item a transaction item writes or checks (`itemKeyOf`). */
export function transactItemKey(item: TransactItem): string | undefined {
  const key = item.Put?.Item ?? item.Update?.Key ?? item.Delete?.Key ?? item.ConditionCheck?.Key;
  return key ? itemKeyOf(key as { PK: unknown; SK: unknown }) : undefined;
}

/**
 * The transaction with its naming changes merged, one write per holder: into the holder's own Put (created or
 * replaced with it: the fields set on the item as written), dropped where the holder is deleted with it (its
 * children's deletes), or one update per holder that takes the place of a check the transaction makes of the holder
 * (a reference's existence check: its condition and error kept). A holder's version then moves once.
 */
export function mergeNamings(ops: readonly WriteOp[]): WriteOp[] {
  const byHolder = new Map<string, Naming[]>();
  for (const op of ops) {
    if (!op.naming) continue;
    const holder = itemKeyOf(keys.entity(op.naming.holder.collection, op.naming.holder.id));
    byHolder.set(holder, [...(byHolder.get(holder) ?? []), op.naming]);
  }
  if (byHolder.size === 0) return [...ops];
  const merged: WriteOp[] = [];
  const handled = new Set<string>();
  for (const op of ops) {
    if (op.naming) continue;
    const key = transactItemKey(op.item);
    const namings = key === undefined ? undefined : byHolder.get(key);
    if (!namings || key === undefined) {
      merged.push(op);
      continue;
    }
    handled.add(key);
    const { Put, ConditionCheck, Delete } = op.item;
    if (Put) {
      const item = { ...Put.Item };
      for (const { holder, value } of namings) {
        if (value === undefined) delete item[holder.field];
        else item[holder.field] = value;
      }
      merged.push({ ...op, item: { Put: { ...Put, Item: item } } });
    } else if (Delete) {
      merged.push(op);
    } else if (ConditionCheck) {
      const condition = {
        expression: ConditionCheck.ConditionExpression ?? HOLDER_STORED,
        names: ConditionCheck.ExpressionAttributeNames ?? {},
        values: ConditionCheck.ExpressionAttributeValues ?? {},
      };
      merged.push(updateOf(String(ConditionCheck.TableName), namings, condition, op.onConditionFailed));
    } else {
      throw new Error(`a transaction both updates ${key} and changes the fields naming its children`);
    }
  }
  for (const op of ops) {
    if (!op.naming) continue;
    const holder = op.naming.holder;
    const key = itemKeyOf(keys.entity(holder.collection, holder.id));
    if (handled.has(key)) continue;
    handled.add(key);
    const update = op.item.Update!;
    merged.push(
      updateOf(String(update.TableName), byHolder.get(key)!, { expression: HOLDER_STORED, values: {} }, undefined),
    );
  }
  return merged;
}

/**
 * Removes a naming field that names an entity no longer stored (deleted outside the API): only while it still names
 * that id, which is never reused, so a field set meanwhile stays.
 */
export function unnamingOp(
  tableName: string,
  holder: { collection: string; id: string; field: string },
  named: string,
) {
  return updateOf(tableName, [{ holder, value: undefined }], {
    expression: '#naming0 = :named',
    values: { ':named': named },
  });
}
