import { identities } from '../entities/identity.ts';
import { identityRoleMarker } from '../entities/policies.ts';
import type { ApiError } from '../errors/api-error.ts';
import { itemKeyOf } from './derived-items.ts';
import { fitsKey, keys } from './keys.ts';
import { transactItemKey } from './naming-field.ts';
import type { ItemKey, WriteOp } from './write-op.ts';

/**
 * Where change markers (`lastChangeAt`) live and how a write moves them. A marker several identities poll (the global
 * one, one per role attribute) is an item of its own (`keys.changeMarker`). An identity's own marker (`@<id>`) lives
 * on the identity's item, as its top-level `changedAt` (beside its version, never in its document): every poll reads
 * its identity anyway, so its own marker costs the poll no item of its own (two items, one read unit, where a marker
 * item made it three and 1.5).
 *
 * A move of a marker on an identity's item must never create that item (an update of a missing key would: a ghost
 * identity with nothing but `changedAt`), and a transaction may name an item once: so a transaction's moves are
 * folded into its own write of the identity (`withMarkerMoves`), and the others are conditioned on the identity being
 * stored. A policy may still name `@<id>` of an identity that is not stored (its role ids are checked when added, but
 * one deleted outside the API, or named before the check, stays named): that marker is not moved at all.
 *
 * Tables written before this kept identities' markers as items of their own (`CHANGED#service-access:@<id>`): no
 * longer read or written, and removed by the integrity fix (`isRetiredOwnMarker`).
 */

/** The key of an item that holds a marker. */
export type MarkerItemKey = ReturnType<typeof keys.changeMarker>;

/** The attribute that holds a marker's instant, on a marker's item and on an identity's item alike. */
export const CHANGED_AT = 'changedAt';

/** The assignment a move adds to an update (its own placeholders, so it joins any other expression). */
const SET_CHANGED_AT = '#markerChangedAt = :markerChangedAt';

/** The start of an update expression's SET clause: DynamoDB reads its keywords in any case. */
const SET_CLAUSE = /(^|\s)SET\s/i;

/** What every identity's own marker starts with (`service-access:@`), its id after it. */
const OWN_MARKER_PREFIX = identityRoleMarker('@');

/** The identity whose own marker this is (`@<id>`); undefined for a marker several identities share. */
function identityOfMarker(marker: string): string | undefined {
  return marker.startsWith(OWN_MARKER_PREFIX) ? marker.slice(OWN_MARKER_PREFIX.length) : undefined;
}

/**
 * The key of the item that holds a marker: the identity's own item for its own marker, else the marker's item.
 * Undefined when the marker names nothing that can be stored (an id too long for a key, or none).
 */
export function changeMarkerKey(marker: string): MarkerItemKey | undefined {
  const identityId = identityOfMarker(marker);
  if (identityId === undefined) return fitsKey(marker) ? keys.changeMarker(marker) : undefined;
  return fitsKey(identityId) ? keys.entity(identities.collection, identityId) : undefined;
}

/** Whether an item is an identity's own marker as tables written by earlier versions kept it (an item of its own). */
export function isRetiredOwnMarker(item: Readonly<Record<string, unknown>>): boolean {
  return String(item.PK).startsWith(keys.changeMarker(OWN_MARKER_PREFIX).PK);
}

/** Whether the marker lives on an identity's item (its own), where a move must never create the item. */
function onIdentity(marker: string): boolean {
  return identityOfMarker(marker) !== undefined;
}

/**
 * The move of one marker to now, alone: an update of the marker's item, or of the identity's item only while it is
 * stored (`attribute_exists(PK)`). Undefined when the marker names nothing storable.
 */
export function markerMove(tableName: string, marker: string): WriteOp | undefined {
  const key = changeMarkerKey(marker);
  return key && moveOf(tableName, key, onIdentity(marker), new Date().toISOString());
}

function moveOf(tableName: string, key: ItemKey, onIdentityItem: boolean, at: string): WriteOp {
  return {
    item: {
      Update: {
        TableName: tableName,
        Key: key,
        UpdateExpression: `SET ${SET_CHANGED_AT}`,
        ...(onIdentityItem ? { ConditionExpression: 'attribute_exists(PK)' } : {}),
        ExpressionAttributeNames: { '#markerChangedAt': CHANGED_AT },
        ExpressionAttributeValues: { ':markerChangedAt': at },
      },
    },
  };
}

/**
 * The identities' items whose markers the transaction moves but which it does not write or check itself: the store
 * reads which of them are stored before it sends the transaction (`withMarkerMoves`).
 */
export function unwrittenIdentityKeys(ops: readonly WriteOp[], markers: Iterable<string>): MarkerItemKey[] {
  const written = new Set(ops.map((op) => transactItemKey(op.item)));
  const wanted = new Map<string, MarkerItemKey>();
  for (const marker of markers) {
    const key = onIdentity(marker) ? changeMarkerKey(marker) : undefined;
    if (key && !written.has(itemKeyOf(key))) wanted.set(itemKeyOf(key), key);
  }
  return [...wanted.values()];
}

/**
 * The transaction with its marker moves, each item named once: a move on an identity's item goes into the
 * transaction's own write of it (its Put sets the attribute; its update sets it too; its check becomes an update with
 * the same condition and error; its delete takes the marker with it). An identity the transaction does not write is
 * moved when `stored` (the item keys found just before) holds it, conditioned on it still being stored, and checked
 * still missing when not, so an identity created or deleted since the read cancels the change with `onRace` (the
 * retryable concurrent-modification error) rather than leave its marker unmoved or make a ghost of it.
 */
export function withMarkerMoves(
  tableName: string,
  ops: readonly WriteOp[],
  markers: Iterable<string>,
  stored: ReadonlySet<string>,
  onRace: () => ApiError,
): WriteOp[] {
  const at = new Date().toISOString();
  const onItems = new Map<string, ItemKey>();
  const merged: WriteOp[] = [];
  for (const marker of new Set(markers)) {
    const key = changeMarkerKey(marker);
    if (!key) continue;
    if (onIdentity(marker)) onItems.set(itemKeyOf(key), key);
    else merged.push(moveOf(tableName, key, false, at));
  }
  for (const op of ops) {
    const key = transactItemKey(op.item);
    if (key === undefined || !onItems.delete(key)) merged.push(op);
    else merged.push(movedWithin(op, at));
  }
  for (const [id, key] of onItems) {
    merged.push(stored.has(id) ? storedIdentityMove(tableName, key, at, onRace) : stillMissing(tableName, key, onRace));
  }
  return merged;
}

/**
 * An update's condition that also requires the item stored, so a move folded into it can never create the identity's
 * item, whatever the op it joins checked (an update without a condition, a check that the identity is absent).
 */
function requiringStored(condition: string | undefined): string {
  if (condition === undefined) return 'attribute_exists(PK)';
  return /attribute_exists\(\s*PK\s*\)/.test(condition) ? condition : `(${condition}) AND attribute_exists(PK)`;
}

/** The transaction's own write of an identity's item, now also moving its marker to `at`. */
function movedWithin(op: WriteOp, at: string): WriteOp {
  const { Put, Update, ConditionCheck, Delete } = op.item;
  if (Put) return { ...op, item: { Put: { ...Put, Item: { ...Put.Item, [CHANGED_AT]: at } } } };
  if (Delete) return op;
  if (Update) {
    const expression = Update.UpdateExpression ?? '';
    // An update expression has at most one SET clause (its keywords in any case): the move joins it, or opens one.
    const UpdateExpression = SET_CLAUSE.test(expression)
      ? expression.replace(SET_CLAUSE, `$1SET ${SET_CHANGED_AT}, `)
      : `SET ${SET_CHANGED_AT} ${expression}`.trim();
    return {
      ...op,
      item: {
        Update: {
          ...Update,
          UpdateExpression,
          ConditionExpression: requiringStored(Update.ConditionExpression),
          ExpressionAttributeNames: { ...Update.ExpressionAttributeNames, '#markerChangedAt': CHANGED_AT },
          ExpressionAttributeValues: { ...Update.ExpressionAttributeValues, ':markerChangedAt': at },
        },
      },
    };
  }
  const check = ConditionCheck!;
  return {
    ...op,
    item: {
      Update: {
        TableName: check.TableName,
        Key: check.Key,
        UpdateExpression: `SET ${SET_CHANGED_AT}`,
        ConditionExpression: requiringStored(check.ConditionExpression),
        ExpressionAttributeNames: { ...check.ExpressionAttributeNames, '#markerChangedAt': CHANGED_AT },
        ExpressionAttributeValues: { ...check.ExpressionAttributeValues, ':markerChangedAt': at },
      },
    },
  };
}

function storedIdentityMove(tableName: string, key: ItemKey, at: string, onRace: () => ApiError): WriteOp {
  return { ...moveOf(tableName, key, true, at), onConditionFailed: onRace };
}

/** The check that an identity named by a moved marker is still not stored: created meanwhile, it must be moved too. */
function stillMissing(tableName: string, key: ItemKey, onRace: () => ApiError): WriteOp {
  return {
    item: { ConditionCheck: { TableName: tableName, Key: key, ConditionExpression: 'attribute_not_exists(PK)' } },
    onConditionFailed: onRace,
  };
}
