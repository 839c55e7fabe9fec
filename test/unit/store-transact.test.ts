import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { Store } from '#shared/store/entity-store.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

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
});
