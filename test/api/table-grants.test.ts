import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, QueryCommand, ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { SESSIONS_PER_TRANSACTION, storedApiSessionIds } from '#shared/auth/api-session-store.ts';
import { sweepEndedSessions } from '#shared/auth/ended-sessions-sweep.ts';
import { loadConfig } from '#shared/config.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { recordSent } from '../support/dynamodb-recorder.ts';
import { storeApiSessions } from '../support/stored-api-sessions.ts';
import { asTableUser, holdToTableGrants, type TableRefusal } from '../support/table-grants.ts';

/**
 * DynamoDB Local authorizes nothing, so the tests hold each function to its IAM grant on the table
 * (test/support/table-grants.ts). These tests make sure that check bites: a command outside a function's grant is
 * refused as IAM refuses it, and the test controller's requests and integrity runs are checked as the function that
 * serves them in AWS.
 */

const { controller, call, createdId } = useAdminController();

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

  it('refuses the sweep a query of an index its grant does not name, and lets it query GSI2', async () => {
    const queryOf = (index: string) => () =>
      deps.store.db.send(
        new QueryCommand({
          TableName: deps.store.tableName,
          IndexName: index,
          KeyConditionExpression: `${index}PK = :partition`,
          ExpressionAttributeValues: { ':partition': 'nobody' },
        }),
      );
    const before = refusals.length;

    await expect(asTableUser('session-sweep', queryOf('GSI1'))).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining('/index/GSI1'),
    });
    await expect(asTableUser('session-sweep', queryOf('GSI2'))).resolves.toMatchObject({ Items: [] });
    // Every other function is granted every index.
    await expect(asTableUser('identities', queryOf('GSI1'))).resolves.toMatchObject({ Items: [] });
    expect(refusals.slice(before)).toEqual([
      { user: 'session-sweep', action: 'dynamodb:Query', command: 'QueryCommand', index: 'GSI1' },
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

  it("runs the ended sessions' sweep within the sweep function's grant: it removes what a disable ended", async () => {
    const { deps } = controller();
    const user = await userWithDialSession();
    // More sessions than one removal transaction holds, so the sweep takes several.
    const stored = await storeApiSessions(deps, user.identityId, SESSIONS_PER_TRANSACTION + 10);
    const ids = [user.apiSessionId, ...stored.map((session) => session.id)];

    // As when the function that disabled the identity stopped before removing any of its sessions after the commit.
    const removeOnCommit = deps.store.afterSessionsEnded;
    deps.store.afterSessionsEnded = undefined;
    try {
      expect((await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 })).status).toBe(200);
    } finally {
      deps.store.afterSessionsEnded = removeOnCommit;
    }
    expect((await storedApiSessionIds(deps, ids)).size).toBe(ids.length);

    // Past the moment the sweep lets a notice settle, without waiting for it.
    controller().advanceClock(SWEEP_SETTLE_MS);
    let sent: Awaited<ReturnType<typeof recordSent>>;
    try {
      sent = await recordSent(deps.store.db, () => asTableUser('session-sweep', () => sweepEndedSessions(deps)));
    } finally {
      controller().advanceClock(-SWEEP_SETTLE_MS);
    }

    expect((await storedApiSessionIds(deps, ids)).size).toBe(0);
    const dialSession = await call('GET', `/sessions/${user.dialSessionId}`);
    expect(dialSession.status, dialSession.text).toBe(404);
    const removals = sent.filter((each) => each.command === 'TransactWriteItemsCommand').map((each) => each.input);
    expect(JSON.stringify(removals)).toContain(user.dialSessionId);
    expect(new Set(sent.map((each) => each.user))).toEqual(new Set(['session-sweep']));
    // Its lease and mark, the change log, the identity's and the API session's index partitions, the sessions read
    // again, their removals (the Dial session's with its API session's), its new mark and the lease given back; of the
    // indexes GSI2 alone.
    expect(new Set(sent.map((each) => each.command))).toEqual(
      new Set([
        'GetItemCommand',
        'QueryCommand',
        'BatchGetItemCommand',
        'TransactWriteItemsCommand',
        'UpdateItemCommand',
      ]),
    );
    expect(new Set(sent.flatMap((each) => each.input.IndexName ?? []))).toEqual(new Set(['GSI2']));
  });
});

/** How long after its instant the sweep first takes a notice (`ended-sessions-sweep.ts`'s settle), and a margin. */
const SWEEP_SETTLE_MS = 5_500;

let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;

/**
 * A user logged in with a Dial session (a service, a router and the policies that let the user dial it through the
 * router): ending its API session removes the Dial session too.
 */
async function userWithDialSession() {
  const tag = unique('swept');
  const name = unique('swept-user');
  const password = `${name}-Pw1!`;
  const identityId = await createdId('/identities', {
    name,
    type: 'User',
    isAdmin: false,
    roleAttributes: [`${tag}-users`],
  });
  await createdId('/authenticators', { identityId, method: 'updb', username: name, password });
  const serviceId = await createdId('/services', { name: unique('swept-svc'), roleAttributes: [`${tag}-svc`] });
  await createdId('/edge-routers', { name: unique('swept-er'), roleAttributes: [`${tag}-er`] });
  await createdId('/service-policies', {
    name: unique('swept-sp'),
    semantic: 'AnyOf',
    type: 'Dial',
    identityRoles: [`#${tag}-users`],
    serviceRoles: [`#${tag}-svc`],
  });
  await createdId('/edge-router-policies', {
    name: unique('swept-erp'),
    semantic: 'AnyOf',
    identityRoles: [`#${tag}-users`],
    edgeRouterRoles: [`#${tag}-er`],
  });
  await createdId('/service-edge-router-policies', {
    name: unique('swept-serp'),
    semantic: 'AnyOf',
    serviceRoles: [`#${tag}-svc`],
    edgeRouterRoles: [`#${tag}-er`],
  });
  const token = await controller().login(name, password);
  const current = await controller().call('GET', '/edge/client/v1/current-api-session', { token });
  const dial = await controller().call('POST', '/edge/client/v1/sessions', {
    token,
    body: { serviceId, type: 'Dial' },
  });
  expect(dial.status, dial.text).toBe(201);
  return { identityId, apiSessionId: current.body.data.id as string, dialSessionId: dial.body.data.id as string };
}
