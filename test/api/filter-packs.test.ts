import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { MAX_PACKED_RECORD_BYTES, packBucket } from '#shared/store/filter-packs.ts';
import { keys } from '#shared/store/keys.ts';
import { useAdminController } from '../support/admin-controller.ts';

/**
 * Lists whose filter pins nothing read the type's filter records from its packs (`shared/store/filter-packs.ts`):
 * they must stay in step with every create, change and delete, records too large for a pack included.
 */

const { controller, call, createdId } = useAdminController();

const names = async (filter: string) => {
  const response = await call('GET', `/identities?limit=500&filter=${encodeURIComponent(filter)}`);
  expect(response.status).toBe(200);
  return (response.body.data as { name: string }[]).map((identity) => identity.name).sort();
};

async function packItems(): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await controller().deps.store.db.send(
    new QueryCommand({
      TableName: controller().deps.store.tableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.filterPack('identities', '').PK },
    }),
  );
  return Items;
}

describe('filter packs', () => {
  it('follow creates, renames and deletes, and list records too large for a pack from their id-order item', async () => {
    const small = await createdId('/identities', { name: 'pack-small', type: 'User', isAdmin: false });
    const large = await createdId('/identities', {
      name: 'pack-large',
      type: 'User',
      isAdmin: false,
      tags: { note: 'x'.repeat(MAX_PACKED_RECORD_BYTES) },
    });

    expect(await names('name contains "pack-"')).toEqual(['pack-large', 'pack-small']);
    const packed = (await packItems()).find((item) => item.SK === packBucket(large));
    expect(packed?.[`r:${large}`]).toBe('');

    await call('PATCH', `/identities/${small}`, { name: 'pack-renamed' });
    expect(await names('name contains "pack-"')).toEqual(['pack-large', 'pack-renamed']);

    await call('DELETE', `/identities/${large}`);
    expect(await names('name contains "pack-"')).toEqual(['pack-renamed']);
    expect((await packItems()).some((item) => `r:${large}` in item)).toBe(false);
  });

  it('fall back to reading the entities when a pack lost records (written before packs existed)', async () => {
    const id = await createdId('/identities', { name: 'pack-unpacked', type: 'User', isAdmin: false });
    const { store } = controller().deps;
    const pack = keys.filterPack('identities', packBucket(id));
    await store.db.send(new DeleteCommand({ TableName: store.tableName, Key: pack }));

    expect(await names('name contains "unpacked"')).toEqual(['pack-unpacked']);
  });
});
