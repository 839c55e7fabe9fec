import { describe, expect, it } from 'vitest';
import { ApiError } from '#shared/errors/api-error.ts';
import { changeMarkerKey, unwrittenIdentityKeys, withMarkerMoves } from '#shared/store/change-markers.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

const TABLE = 'table';
const OWN = 'service-access:@i1';
const IDENTITY = { PK: 'identities#i1', SK: 'META' };
const race = () => new ApiError('SERVER_TOO_MANY_REQUESTS');

/** The transaction items `withMarkerMoves` sends for `ops` moving `markers`, the identities in `stored` found. */
const moved = (ops: WriteOp[], markers: string[], stored: string[] = []) =>
  withMarkerMoves(TABLE, ops, markers, new Set(stored.map((pk) => `${pk}|META`)), race);

describe('change markers', () => {
  it("keeps an identity's own marker on its item, and every other on an item of its own", () => {
    expect(changeMarkerKey(OWN)).toEqual(IDENTITY);
    expect(changeMarkerKey('service-access:#web')).toEqual({ PK: 'CHANGED#service-access:#web', SK: 'SHARD#0' });
    expect(changeMarkerKey('service-access')).toEqual({ PK: 'CHANGED#service-access', SK: 'SHARD#0' });
    // An id no key can hold names nothing.
    expect(changeMarkerKey(`service-access:@${'x'.repeat(1001)}`)).toBeUndefined();
    expect(changeMarkerKey('service-access:@')).toBeUndefined();
  });

  it("sets the marker in the transaction's own Put of the identity, and adds nothing for its Delete", () => {
    const put: WriteOp = { item: { Put: { TableName: TABLE, Item: { ...IDENTITY, name: 'a' } } } };
    const [item] = moved([put], [OWN]);
    expect(item!.item.Put!.Item).toEqual({ ...IDENTITY, name: 'a', changedAt: expect.any(String) });

    const del: WriteOp = { item: { Delete: { TableName: TABLE, Key: IDENTITY } } };
    expect(moved([del], [OWN])).toEqual([del]);
  });

  it("joins the SET clause of the transaction's own update of the identity, or opens one", () => {
    const update = (UpdateExpression: string): WriteOp => ({
      item: {
        Update: {
          TableName: TABLE,
          Key: IDENTITY,
          UpdateExpression,
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    });
    const expressionOf = (op: WriteOp | undefined) => op?.item.Update?.UpdateExpression;
    expect(expressionOf(moved([update('SET #f0 = :f0 ADD version :one')], [OWN])[0])).toBe(
      'SET #markerChangedAt = :markerChangedAt, #f0 = :f0 ADD version :one',
    );
    // DynamoDB reads an expression's keywords in any case: a second SET clause would fail the whole transaction.
    expect(expressionOf(moved([update('set #f0 = :f0 add version :one')], [OWN])[0])).toBe(
      'SET #markerChangedAt = :markerChangedAt, #f0 = :f0 add version :one',
    );
    const [added] = moved([update('ADD version :one')], [OWN]);
    expect(expressionOf(added)).toBe('SET #markerChangedAt = :markerChangedAt ADD version :one');
    expect(added!.item.Update).toMatchObject({
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#markerChangedAt': 'changedAt' },
      ExpressionAttributeValues: { ':one': 1, ':markerChangedAt': expect.any(String) },
    });
  });

  it("turns the transaction's check of the identity into an update with the same condition and error", () => {
    const missing = () => new ApiError('NOT_FOUND');
    const check: WriteOp = {
      item: {
        ConditionCheck: {
          TableName: TABLE,
          Key: IDENTITY,
          ConditionExpression: 'attribute_exists(PK) AND deletingUntil < :now',
          ExpressionAttributeValues: { ':now': 'then' },
        },
      },
      onConditionFailed: missing,
    };
    const [item, ...rest] = moved([check], [OWN]);
    expect(rest).toEqual([]);
    expect(item!.onConditionFailed).toBe(missing);
    expect(item!.item.Update).toEqual({
      TableName: TABLE,
      Key: IDENTITY,
      UpdateExpression: 'SET #markerChangedAt = :markerChangedAt',
      ConditionExpression: 'attribute_exists(PK) AND deletingUntil < :now',
      ExpressionAttributeNames: { '#markerChangedAt': 'changedAt' },
      ExpressionAttributeValues: { ':now': 'then', ':markerChangedAt': expect.any(String) },
    });
  });

  it('never folds a move into an op on the identity whose condition would let the update create it', () => {
    const conditionOf = (op: WriteOp) => moved([op], [OWN])[0]?.item.Update?.ConditionExpression;
    const unconditioned: WriteOp = {
      item: { Update: { TableName: TABLE, Key: IDENTITY, UpdateExpression: 'SET #f0 = :f0' } },
    };
    expect(conditionOf(unconditioned)).toBe('attribute_exists(PK)');
    const absent: WriteOp = {
      item: { ConditionCheck: { TableName: TABLE, Key: IDENTITY, ConditionExpression: 'attribute_not_exists(PK)' } },
    };
    expect(conditionOf(absent)).toBe('(attribute_not_exists(PK)) AND attribute_exists(PK)');
  });

  it('moves an identity the transaction does not write only if stored, and checks one not stored stays so', () => {
    const other: WriteOp = { item: { Delete: { TableName: TABLE, Key: { PK: 'services#s1', SK: 'META' } } } };
    const markers = [OWN, 'service-access:@i2', 'service-access:#web'];
    expect(unwrittenIdentityKeys([other], markers)).toEqual([IDENTITY, { PK: 'identities#i2', SK: 'META' }]);

    const items = moved([other], markers, ['identities#i1']);
    const keyOf = ({ item }: WriteOp) => (item.Update ?? item.ConditionCheck ?? item.Delete)?.Key;
    const byKey = new Map(items.map((op) => [JSON.stringify(keyOf(op)), op]));
    const storedMove = byKey.get(JSON.stringify(IDENTITY))!;
    expect(storedMove.item.Update?.ConditionExpression).toBe('attribute_exists(PK)');
    expect(storedMove.onConditionFailed).toBe(race);
    const missingCheck = byKey.get(JSON.stringify({ PK: 'identities#i2', SK: 'META' }))!;
    expect(missingCheck.item.ConditionCheck?.ConditionExpression).toBe('attribute_not_exists(PK)');
    expect(missingCheck.onConditionFailed).toBe(race);
    // A shared marker may create its item: nobody's poll of it may have come first.
    const shared = byKey.get(JSON.stringify({ PK: 'CHANGED#service-access:#web', SK: 'SHARD#0' }))!;
    expect(shared.item.Update?.ConditionExpression).toBeUndefined();
    expect(items).toHaveLength(4);
  });
});
