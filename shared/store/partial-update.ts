import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import type { ApiError } from '../errors/api-error.ts';
import type { Store } from './entity-store.ts';
import { keys, storedAttributes } from './keys.ts';
import { unlessConditionFails } from './table-client.ts';
import type { WriteOp } from './write-op.ts';

/**
 * Writes that change part of an entity without the read-modify-write of a replace: a login stamping what the SDK
 * reported, a lockout disabling an identity, a miss counter. They keep what the kit's writes keep: the version moves
 * (a concurrent replace retries instead of undoing them), the filter record follows, and an entity marked for
 * deletion is never written. Callers say what must hold with a {@link Guard}, never with an expression.
 */

/** A condition on the entity's stored fields. */
export type Guard =
  | { readonly field: string; readonly equals: string | number | boolean }
  | { readonly field: string; readonly isText: true; readonly before?: string }
  | { readonly anyOf: readonly Guard[] };

interface Compiled {
  readonly expression: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

/** The guard as a condition expression, with its placeholders numbered from `start`. */
function compile(guard: Guard, counter: { next: number }): Compiled {
  if ('anyOf' in guard) {
    const parts = guard.anyOf.map((each) => compile(each, counter));
    return {
      expression: `(${parts.map((part) => part.expression).join(' OR ')})`,
      names: Object.assign({}, ...parts.map((part) => part.names)),
      values: Object.assign({}, ...parts.map((part) => part.values)),
    };
  }
  const index = counter.next++;
  const name = `#g${index}`;
  if ('equals' in guard) {
    return {
      expression: `${name} = :g${index}`,
      names: { [name]: guard.field },
      values: { [`:g${index}`]: guard.equals },
    };
  }
  const typed = `attribute_type(${name}, :s${index})`;
  const values: Record<string, unknown> = { [`:s${index}`]: 'S' };
  if (guard.before === undefined) return { expression: typed, names: { [name]: guard.field }, values };
  values[`:g${index}`] = guard.before;
  return { expression: `(${typed} AND ${name} < :g${index})`, names: { [name]: guard.field }, values };
}

/** The entity exists, no delete has marked it (a mark past its time no longer counts), and `guard` holds. */
function liveCondition(guard: Guard | undefined): Compiled {
  const live = 'attribute_exists(PK) AND (attribute_not_exists(deletingUntil) OR deletingUntil < :wallClock)';
  const base = { expression: live, names: {}, values: { ':wallClock': new Date().toISOString() } };
  if (!guard) return base;
  const extra = compile(guard, { next: 0 });
  return {
    expression: `${live} AND ${extra.expression}`,
    names: extra.names,
    values: { ...base.values, ...extra.values },
  };
}

/**
 * Sets `changes` on the entity as `current` was read, when it is live and `guard` holds: the version moves, and its
 * filter record is rewritten from `current` with the changes (a write racing this one can leave the record a write
 * behind, until the entity's next write; the integrity scan sets it right).
 */
export function partialUpdateOps<D extends BaseDocument>(
  store: Store,
  def: EntityDefinition<D>,
  current: D,
  changes: Partial<D>,
  guard: Guard | undefined,
  onFailed: () => ApiError,
): WriteOp[] {
  const condition = liveCondition(guard);
  const stored = storedAttributes(changes as Record<string, unknown>);
  const names: Record<string, string> = { ...condition.names };
  const values: Record<string, unknown> = { ...condition.values, ':one': 1 };
  const sets = Object.entries(stored).map(([field, value], index) => {
    names[`#f${index}`] = field;
    values[`:f${index}`] = value;
    return `#f${index} = :f${index}`;
  });
  return [
    {
      item: {
        Update: {
          TableName: store.tableName,
          Key: keys.entity(def.collection, current.id),
          UpdateExpression: `${sets.length > 0 ? `SET ${sets.join(', ')} ` : ''}ADD version :one`,
          ConditionExpression: condition.expression,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      onConditionFailed: onFailed,
    },
    ...store.filterRecordOps(def, { ...current, ...changes }),
    ...store.routerNoticeOps(def, current, { ...current, ...changes }),
  ];
}

/**
 * Adds `delta` to a counter kept on an entity's item outside its versioned state (an authenticator's wrong
 * passwords): atomic, so concurrent misses all count, and no version moves. Undefined when the entity is gone.
 */
export async function addToCounter(
  store: Store,
  entity: CounterHolder,
  field: string,
  delta: number,
): Promise<number | undefined> {
  const updated = await unlessConditionFails(
    store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.entity(entity.collection, entity.id),
        UpdateExpression: 'ADD #counter :delta',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: { '#counter': field },
        ExpressionAttributeValues: { ':delta': delta },
        ReturnValues: 'UPDATED_NEW',
      }),
    ),
  );
  return updated && Number(updated.Attributes?.[field] ?? 0);
}

/** Sets such a counter to `value` in a transaction (the entity must still exist). */
export function setCounterOp(
  store: Store,
  entity: CounterHolder,
  field: string,
  value: number,
  onFailed: () => ApiError,
): WriteOp {
  return {
    item: { Update: counterSet(store, entity, field, value) },
    onConditionFailed: onFailed,
  };
}

function counterSet(store: Store, entity: CounterHolder, field: string, value: number) {
  return {
    TableName: store.tableName,
    Key: keys.entity(entity.collection, entity.id),
    UpdateExpression: 'SET #counter = :value',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeNames: { '#counter': field },
    ExpressionAttributeValues: { ':value': value },
  };
}

/** The entity a counter is kept on: its collection and id. */
export interface CounterHolder {
  readonly collection: string;
  readonly id: string;
}

/**
 * A check, in a transaction, that no entity of `collection` holds `value` in its unique field `field`: a uniqueness
 * that spans two types (router names across edge and transit routers).
 */
export function uniqueValueFreeOp(
  store: Store,
  collection: string,
  field: string,
  value: string,
  onTaken: () => ApiError,
): WriteOp {
  return {
    item: {
      ConditionCheck: {
        TableName: store.tableName,
        Key: keys.unique(collection, field, value),
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    onConditionFailed: onTaken,
  };
}
