import { BatchGetCommand, type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { type ServicePolicy, servicePolicies } from '#shared/entities/policies.ts';
import { type Terminator, terminators } from '#shared/entities/terminator.ts';
import { MAX_TRANSACTION_ITEMS, Store } from '#shared/store/entity-store.ts';
import { keys } from '#shared/store/keys.ts';
import { packTransactions } from '#shared/store/pack-transactions.ts';

const store = new Store({} as DynamoDBDocumentClient, 't');

function terminator(id: string): Terminator {
  return {
    id,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    tags: {},
    service: 'service-1',
    router: 'router-1',
    edgeRouterId: 'router-1',
    transitRouterId: null,
    binding: 'edge',
    address: id,
    identity: '',
    identitySecret: null,
    cost: 0,
    precedence: 'default',
  };
}

const entityKeyOf = (id: string) => keys.entity('terminators', id).PK;
const deletedEntities = (transaction: readonly { item: { Delete?: { Key?: Record<string, unknown> } } }[]) =>
  transaction.flatMap(({ item }) => {
    const pk = item.Delete?.Key?.PK;
    return item.Delete?.Key?.SK === 'META' && typeof pk === 'string' ? [pk] : [];
  });

describe('packTransactions', () => {
  it("packs a router's batch of 50 deletes in as few transactions as DynamoDB's 100 items allow, each delete whole", () => {
    const ids = Array.from({ length: 50 }, (_, index) => `t-${index}`);
    const groups = ids.map((id) => store.deleteOps(terminators, terminator(id), 1));
    // Every delete writes its own items; the type's counter update is shared by the whole transaction.
    const own = store.transactionItemCount(groups[0]!) - 1;

    const transactions = packTransactions(store, groups);

    expect(transactions).toHaveLength(Math.ceil(ids.length / Math.floor((MAX_TRANSACTION_ITEMS - 1) / own)));
    for (const transaction of transactions) {
      expect(store.transactionItemCount(transaction)).toBeLessThanOrEqual(MAX_TRANSACTION_ITEMS);
    }
    expect(transactions.flatMap(deletedEntities)).toEqual(ids.map(entityKeyOf));
    // A delete is never split: its entity's and its id-order item's deletes go in the same transaction.
    for (const transaction of transactions) {
      const idOrders = transaction.flatMap(({ item }) =>
        item.Delete?.Key?.PK === keys.idOrder('terminators', '').PK ? [entityKeyOf(String(item.Delete.Key.SK))] : [],
      );
      expect(idOrders).toEqual(deletedEntities(transaction));
    }
  });

  it('makes one transaction of a batch that fits, and none of an empty one', () => {
    const groups = ['a', 'b', 'c'].map((id) => store.deleteOps(terminators, terminator(id), 1));

    expect(packTransactions(store, groups)).toEqual([groups.flat()]);
    expect(packTransactions(store, [])).toEqual([]);
  });

  it('counts the items of writes that move change markers as the transaction sends them', async () => {
    // A store whose table holds identity i1 alone, recording the transaction it sends.
    const sent: unknown[][] = [];
    const db = {
      send: async (command: unknown) => {
        if (command instanceof BatchGetCommand) return { Responses: { t: [{ PK: 'identities#i1', SK: 'META' }] } };
        if (command instanceof TransactWriteCommand) sent.push(command.input.TransactItems ?? []);
        return {};
      },
    };
    const recording = new Store(db as unknown as DynamoDBDocumentClient, 't');
    const policy = (id: string, identityRoles: string[]): ServicePolicy => ({
      id,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      tags: {},
      name: id,
      semantic: 'AnyOf',
      type: 'Dial',
      identityRoles,
      serviceRoles: [],
      postureCheckRoles: [],
    });
    // Markers of a stored identity, of one not stored, and of a role, one of them named by both policies.
    const groups = [
      recording.createOps(servicePolicies, policy('p1', ['@i1', '@i2', '#web'])),
      recording.createOps(servicePolicies, policy('p2', ['@i1', '#db'])),
    ];

    const [transaction, ...more] = packTransactions(recording, groups);
    expect(more).toEqual([]);
    await recording.transact(transaction!);

    expect(sent).toHaveLength(1);
    expect(recording.transactionItemCount(transaction!)).toBe(sent[0]!.length);
  });
});
