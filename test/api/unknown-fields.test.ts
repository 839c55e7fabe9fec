import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';

const { controller, call, createdId } = useAdminController();

const db = () => controller().deps.store.db;
const TableName = () => controller().deps.config.tableName;
const serviceItem = async (id: string) =>
  (await db().send(new GetCommand({ TableName: TableName(), Key: { PK: `services#${id}`, SK: 'META' } }))).Item;

describe('fields this build does not know', () => {
  it('survive its updates, so rolling back to it never erases what a newer build wrote', async () => {
    const id = await createdId('/services', { name: 'rollback-svc', roleAttributes: ['web'] });
    // A newer build stored a field of its own on the service.
    await db().send(
      new UpdateCommand({
        TableName: TableName(),
        Key: { PK: `services#${id}`, SK: 'META' },
        UpdateExpression: 'SET futureField = :value',
        ExpressionAttributeValues: { ':value': 'kept' },
      }),
    );

    expect((await call('PATCH', `/services/${id}`, { name: 'rollback-renamed' })).status).toBe(200);
    expect((await call('PUT', `/services/${id}`, { name: 'rollback-replaced', encryptionRequired: true })).status).toBe(
      200,
    );

    const stored = await serviceItem(id);
    expect(stored).toMatchObject({ name: 'rollback-replaced', futureField: 'kept' });
    // Kept, not shown: the API answers what this build knows.
    const shown = await call('GET', `/services/${id}`);
    expect(shown.body.data).not.toHaveProperty('futureField');
    expect(shown.body.data).toMatchObject({ name: 'rollback-replaced' });
  });
});
