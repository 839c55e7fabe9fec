import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { loadConfig } from '#shared/config.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { recordSent } from '../support/dynamodb-recorder.ts';
import { asTableUser, holdToTableGrants, type TableRefusal } from '../support/table-grants.ts';

/**
 * DynamoDB Local authorizes nothing, so the tests hold each function to its IAM grant on the table
 * (test/support/table-grants.ts). These tests make sure that check bites: a command outside a function's grant is
 * refused as IAM refuses it, and the test controller's requests and integrity runs are checked as the function that
 * serves them in AWS.
 */

const { controller, call } = useAdminController();

describe('the IAM grants the tests hold functions to', () => {
  let deps: Deps;
  let refusals: readonly TableRefusal[];

  beforeAll(async () => {
    const tableName = `grants-${randomUUID()}`;
    deps = createDeps({ ...loadConfig({}), tableName, dynamoDbEndpoint: inject('dynamoEndpoint') });
    await ensureTable(deps.store.db, tableName);
    refusals = holdToTableGrants(deps.store.db);
  });
  afterAll(() => deps.store.db.destroy());

  const scan = () => deps.store.db.send(new ScanCommand({ TableName: deps.store.tableName }));

  it('refuses a whole-table Scan sent by an operation group, with AccessDenied, and lets the integrity scan', async () => {
    await expect(asTableUser('identities', scan)).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining('dynamodb:Scan'),
    });
    expect(refusals).toEqual([{ user: 'identities', action: 'dynamodb:Scan', command: 'ScanCommand' }]);

    await expect(asTableUser('integrity', scan)).resolves.toMatchObject({ Items: [] });
    // A test's own reads of the table are no function's.
    await expect(scan()).resolves.toMatchObject({ Items: [] });
    expect(refusals).toHaveLength(1);
  });

  it('refuses a batch write from the bootstrap, and authorizes a transaction item by item', async () => {
    const item = { PK: 'grants', SK: 'one' };
    const batchWrite = () =>
      deps.store.db.send(
        new BatchWriteCommand({ RequestItems: { [deps.store.tableName]: [{ PutRequest: { Item: item } }] } }),
      );
    await expect(asTableUser('bootstrap', batchWrite)).rejects.toMatchObject({ name: 'AccessDeniedException' });

    // A transaction has no action of its own: its put and condition check are PutItem and ConditionCheckItem.
    const transaction = new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: deps.store.tableName, Item: item } },
        {
          ConditionCheck: {
            TableName: deps.store.tableName,
            Key: { PK: 'grants', SK: 'two' },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
      ],
    });
    await expect(asTableUser('bootstrap', () => deps.store.db.send(transaction))).resolves.toBeDefined();
    expect(refusals.slice(1)).toEqual([
      { user: 'bootstrap', action: 'dynamodb:BatchWriteItem', command: 'BatchWriteItemCommand' },
    ]);
  });
});

describe('the test controller', () => {
  it('sends what a request reads and writes as the function of the route’s operation group', async () => {
    const { db } = controller().deps.store;
    const identities = await recordSent(db, () => call('GET', '/identities'));
    const services = await recordSent(db, () => call('GET', '/services'));

    expect(identities.length).toBeGreaterThan(0);
    expect(new Set(identities.map((sent) => sent.user))).toEqual(new Set(['identities']));
    expect(services.length).toBeGreaterThan(0);
    expect(new Set(services.map((sent) => sent.user))).toEqual(new Set(['services']));
  });

  it('runs the integrity run a database request starts as the integrity function', async () => {
    const { db } = controller().deps.store;
    const sent = await recordSent(db, async () => {
      expect((await call('POST', '/database/check-data-integrity')).status).toBe(202);
      for (let i = 0; i < 200; i++) {
        if (!(await call('GET', '/database/data-integrity-results')).body.data.inProgress) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error('the integrity run did not end');
    });

    const scans = sent.filter((each) => each.command === 'ScanCommand');
    expect(scans.length).toBeGreaterThan(0);
    expect(new Set(scans.map((scan) => scan.user))).toEqual(new Set(['integrity']));
  });
});
