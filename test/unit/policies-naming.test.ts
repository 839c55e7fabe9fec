import type { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { type EdgeRouterPolicy, edgeRouterPolicies } from '#shared/entities/policies.ts';
import type { Store } from '#shared/store/entity-store.ts';
import { selectable, takeOutNamedRoles, withoutNamedRoles } from '#shared/store/policies-naming.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

const policy: EdgeRouterPolicy = {
  id: 'p1',
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-01T00:00:00.000Z',
  tags: {},
  name: 'p1',
  semantic: 'AnyOf',
  identityRoles: ['@r1', '#riders'],
  edgeRouterRoles: ['@r1', '@r2', '#edges'],
  isSystem: false,
};

describe('withoutNamedRoles', () => {
  it('takes the @id out of the fields selecting its collection only', () => {
    const after = withoutNamedRoles(edgeRouterPolicies, policy, [{ collection: 'edge-routers', id: 'r1' }]);
    expect(after.identityRoles).toEqual(['@r1', '#riders']);
    expect(after.edgeRouterRoles).toEqual(['@r2', '#edges']);
    expect(after.updatedAt).toBe(policy.updatedAt);
  });

  it('takes several named entities out at once', () => {
    const after = withoutNamedRoles(edgeRouterPolicies, policy, [
      { collection: 'edge-routers', id: 'r1' },
      { collection: 'identities', id: 'r1' },
    ]);
    expect(after).toMatchObject({ identityRoles: ['#riders'], edgeRouterRoles: ['@r2', '#edges'] });
  });

  it('answers the same document when it names none of them', () => {
    expect(withoutNamedRoles(edgeRouterPolicies, policy, [{ collection: 'edge-routers', id: 'r9' }])).toBe(policy);
  });
});

describe('selectable', () => {
  it('knows the collections policies select', () => {
    expect(['identities', 'services', 'edge-routers', 'posture-checks'].every(selectable)).toBe(true);
    expect(selectable('authenticators')).toBe(false);
  });
});

/**
 * A store holding `count` edge router policies that name edge router r1: queries page their selection items,
 * transactions take the policies they update out of the partition.
 */
function storeNaming(count: number) {
  const naming = new Set(Array.from({ length: count }, (_, i) => `p${String(i).padStart(3, '0')}`));
  const transactions: number[] = [];
  const store = {
    tableName: 't',
    db: {
      send: async (command: QueryCommand) => {
        const limit = command.input.Limit ?? Number.POSITIVE_INFINITY;
        const page = [...naming].slice(0, limit).map((id) => ({ SK: `edge-router-policies#${id}` }));
        return { Items: page, ...(naming.size > limit ? { LastEvaluatedKey: page.at(-1) } : {}) };
      },
    },
    getManyStored: async (_def: unknown, ids: readonly string[]) =>
      ids.map((id) => ({ doc: { ...policy, id }, version: 1 })),
    replaceOps: (_def: unknown, stored: { doc: EdgeRouterPolicy }): WriteOp[] =>
      Array.from({ length: 7 }, () => ({
        item: { Delete: { TableName: 't', Key: { PK: `edge-router-policies#${stored.doc.id}`, SK: 'META' } } },
      })),
    transactionItemCount: (ops: readonly WriteOp[]) => ops.length,
    transact: async (ops: readonly WriteOp[]) => {
      transactions.push(ops.length);
      for (const op of ops) naming.delete(String(op.item.Delete?.Key?.PK).slice('edge-router-policies#'.length));
    },
  };
  return { store: store as unknown as Store, naming, transactions };
}

describe('takeOutNamedRoles', () => {
  const named = [{ collection: 'edge-routers', id: 'r1' }];

  it("answers the writes for the delete's own transaction when they fit its room", async () => {
    const { store, transactions } = storeNaming(3);
    const writes = await takeOutNamedRoles(store, named, 21);
    expect(writes.map(({ key }) => key)).toEqual([
      'edge-router-policies#p000|META',
      'edge-router-policies#p001|META',
      'edge-router-policies#p002|META',
    ]);
    expect(transactions).toEqual([]);
  });

  it('updates more policies than a page or the room holds in transactions of their own, at most 100 items each', async () => {
    const { store, naming, transactions } = storeNaming(120);
    expect(await takeOutNamedRoles(store, named, 40)).toEqual([]);
    expect(naming.size).toBe(0);
    expect(transactions.every((items) => items <= 100)).toBe(true);
    expect(transactions.reduce((sum, items) => sum + items, 0)).toBe(120 * 7);
  });

  it('asks nothing for a collection no policy selects', async () => {
    const { store } = storeNaming(3);
    expect(await takeOutNamedRoles(store, [{ collection: 'authenticators', id: 'a1' }], 10)).toEqual([]);
  });
});
