import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { services as servicesDefinition } from '#shared/entities/service.ts';
import { type Terminator, terminators as terminatorsDefinition } from '#shared/entities/terminator.ts';
import { ctrlChangeOp } from '#shared/store/ctrl-changes.ts';
import { Store } from '#shared/store/entity-store.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

const serviceDoc = {
  id: 's',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  tags: {},
  name: 'svc',
  configs: [],
  encryptionRequired: true,
  maxIdleTimeMillis: 0,
  roleAttributes: [],
  terminatorStrategy: 'smartrouting' as const,
};

const put: WriteOp['item'] = { Put: { TableName: 't', Item: { PK: 'a', SK: 'b' } } };

describe('Store.transact', () => {
  it('resolves and logs when after-commit work fails once the transaction has committed', async () => {
    const send = vi.fn(async () => ({}));
    const warn = vi.fn();
    const store = new Store({ send } as unknown as DynamoDBDocumentClient, 't', { warn });
    const later = vi.fn(async () => {});

    await store.transact([
      { item: put, afterCommit: () => Promise.reject(new Error('throttled')) },
      { item: put, afterCommit: later },
    ]);

    expect(send).toHaveBeenCalledTimes(1);
    expect(later).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('after-commit'), { error: 'throttled' });
  });

  it('runs no after-commit work when the transaction fails', async () => {
    const store = new Store(
      { send: async () => Promise.reject(new Error('down')) } as unknown as DynamoDBDocumentClient,
      't',
    );
    const later = vi.fn(async () => {});

    await expect(store.transact([{ item: put, afterCommit: later }])).rejects.toThrow('down');
    expect(later).not.toHaveBeenCalled();
  });

  it('writes a notice a transaction needs once (a service deleted with its overrides: `services`) once, and every other', async () => {
    const send = vi.fn(async (_command: { input: { TransactItems: unknown[] } }) => ({}));
    const store = new Store({ send } as unknown as DynamoDBDocumentClient, 't');
    const services = store.routerNoticeOps(servicesDefinition, undefined, serviceDoc);
    const reach = ctrlChangeOp(store, { kind: 'reach' }, new Date());

    await store.transact([{ item: put }, ...services, ...services, reach, reach]);

    const items = send.mock.calls[0]![0].input.TransactItems as { Put?: { Item: { kind?: string } } }[];
    expect(items.map((item) => item.Put?.Item.kind)).toEqual([undefined, 'services', 'reach', 'reach']);
  });

  it("writes a service's terminators notice once a transaction (a router deleted with its terminators), each service's", async () => {
    const send = vi.fn(async (_command: { input: { TransactItems: unknown[] } }) => ({}));
    const store = new Store({ send } as unknown as DynamoDBDocumentClient, 't');
    const of = (service: string) => ({ service }) as Terminator;
    const deletes = [of('s1'), of('s2'), of('s1')].flatMap((doc) =>
      store.routerNoticeOps(terminatorsDefinition, doc, undefined),
    );

    await store.transact(deletes);

    const items = send.mock.calls[0]![0].input.TransactItems as { Put: { Item: { serviceId: string } } }[];
    expect(items.map((item) => item.Put.Item.serviceId)).toEqual(['s1', 's2']);
  });
});
