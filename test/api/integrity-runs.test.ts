import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, PutCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { INTEGRITY_CORE, type IntegrityCore } from '#shared/integrity/integrity-run.ts';
import { restoreSnapshot } from '../../scripts/restore-snapshot.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { M } from '../support/management-fixtures.ts';
import { startTestController, type TestController } from '../support/test-controller.ts';

/** The scan's segments wait for this gate while a test holds it shut; a segment may also be made to fail. */
const gate = { open: Promise.resolve(), release: () => {}, failSegment: undefined as number | undefined };
function shut(): void {
  gate.open = new Promise((resolve) => {
    gate.release = resolve;
  });
}
const gatedCore: IntegrityCore = {
  ...INTEGRITY_CORE,
  scanSegment: async (deps, input) => {
    await gate.open;
    if (input.segment === gate.failSegment) throw new Error('segment failed on purpose');
    return INTEGRITY_CORE.scanSegment(deps, input);
  },
};

/** The network's keys in files, as `npm start` keeps them: a controller on a restored table needs the same keys. */
const pkiKeys = { kind: 'files', directory: mkdtempSync(join(tmpdir(), 'ziti-restore-keys-')) } as const;

const { controller, admin, call } = useAdminController({ pkiKeys }, { integrityCore: gatedCore });
// Registered after the controller's own hook, so it runs before the controller closes.
afterAll(() => {
  gate.release();
});

/** The results once the run in progress has ended. */
async function settled() {
  for (let i = 0; i < 200; i++) {
    const results = await call('GET', '/database/data-integrity-results');
    if (!results.body.data.inProgress) return results;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the integrity run did not end');
}

describe('data integrity runs', () => {
  it('check: 202, a second request while it runs is 429, then the results', async () => {
    shut();
    const started = await call('POST', '/database/check-data-integrity');
    expect(started.status, started.text).toBe(202);
    expectMatchesSpec('management', 'POST', '/database/check-data-integrity', 202, started.body);
    const running = await call('GET', '/database/data-integrity-results');
    expect(running.body.data).toMatchObject({ inProgress: true, fixingErrors: false });
    for (const path of ['/database/check-data-integrity', '/database/fix-data-integrity']) {
      const refused = await call('POST', path);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
    }
    gate.release();
    const results = await settled();
    expect(results.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/database/data-integrity-results', 200, results.body);
    expect(results.body.data).toMatchObject({ inProgress: false, tooManyErrors: false, error: '', results: [] });
    expect(Date.parse(results.body.data.endTime)).toBeGreaterThanOrEqual(Date.parse(results.body.data.startTime));
  });

  it('fix: repairs what a check found, and the next check is clean', async () => {
    const created = await call('POST', '/services', { name: 'integrity-run-service' });
    expect(created.status).toBe(201);
    const { db, tableName } = controller().deps.store;
    await db.send(
      new DeleteCommand({ TableName: tableName, Key: { PK: 'UNIQUE#services#name', SK: 'integrity-run-service' } }),
    );
    expect((await call('POST', '/database/check-data-integrity')).status).toBe(202);
    const found = (await settled()).body.data;
    expect(found.results).toEqual([{ description: expect.stringContaining('UNIQUE#services#name'), fixed: false }]);

    const fixing = await call('POST', '/database/fix-data-integrity');
    expect(fixing.status).toBe(202);
    expectMatchesSpec('management', 'POST', '/database/fix-data-integrity', 202, fixing.body);
    const fixed = (await settled()).body.data;
    expect(fixed.fixingErrors).toBe(true);
    expect(fixed.results).toEqual([{ description: expect.stringContaining('UNIQUE#services#name'), fixed: true }]);
    expect((await call('POST', '/services', { name: 'integrity-run-service' })).status).toBe(400);

    expect((await call('POST', '/database/check-data-integrity')).status).toBe(202);
    expect((await settled()).body.data.results).toEqual([]);
  });

  it('records a failed segment as the run error and frees the lock', async () => {
    gate.failSegment = 1;
    expect((await call('POST', '/database/check-data-integrity')).status).toBe(202);
    const failed = (await settled()).body.data;
    expect(failed.error).toMatch(/segment failed on purpose/);
    gate.failSegment = undefined;
    expect((await call('POST', '/database/check-data-integrity')).status).toBe(202);
    expect((await settled()).body.data.error).toBe('');
  });

  it('takes over the lock of a run that died without freeing it', async () => {
    const { db, tableName } = controller().deps.store;
    const past = new Date(Date.now() - 2 * 60 * 60_000).toISOString();
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          PK: 'INTEGRITY#status',
          SK: 'STATUS',
          runId: 'dead',
          inProgress: true,
          startTime: past,
          lockedUntil: past,
        },
      }),
    );
    expect((await call('POST', '/database/check-data-integrity')).status).toBe(202);
    expect((await settled()).body.data.error).toBe('');
  });

  it('is for admins only', async () => {
    const identity = await call('POST', '/identities', { name: 'integrity-user', type: 'User', isAdmin: false });
    await call('POST', '/authenticators', {
      identityId: identity.body.data.id,
      method: 'updb',
      username: 'integrity-user',
      password: 'Integrity-Passw0rd!',
    });
    const user = await controller().login('integrity-user', 'Integrity-Passw0rd!');
    for (const [method, path] of [
      ['POST', '/database/check-data-integrity'],
      ['POST', '/database/fix-data-integrity'],
      ['GET', '/database/data-integrity-results'],
      ['POST', '/database/snapshot'],
    ] as const) {
      expect((await call(method, path, undefined, user)).status, path).toBe(401);
    }
  });
});

describe('database snapshots', () => {
  it('exports the table as JSON Lines, one a minute', async () => {
    const first = await call('POST', '/database/snapshot');
    expect(first.status, first.text).toBe(200);
    expectMatchesSpec('management', 'POST', '/database/snapshot', 200, first.body);
    const again = await call('POST', '/database/snapshot');
    expect(again.status).toBe(429);
    expect(again.body.error.code).toBe('RATE_LIMITED');

    const directory = (controller().deps.config.snapshots as { directory: string }).directory;
    const [file] = readdirSync(directory);
    expect(file).toMatch(/^ziti-controller-.*\.jsonl$/);
    const lines = readFileSync(join(directory, file!), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const { db, tableName } = controller().deps.store;
    let stored = 0;
    for await (const page of paginateScan({ client: db }, { TableName: tableName })) stored += page.Items?.length ?? 0;
    // The snapshot's own marker is written before the export; everything else is the table as it was.
    expect(lines.length).toBe(stored);
    expect(lines.some((item) => item.PK === `identities#${controller().deps.config.tableName}`)).toBe(false);
    expect(lines.some((item) => String(item.PK).startsWith('UNIQUE#identities#name'))).toBe(true);

    // The snapshot loads into a fresh table item for item.
    const restoredTable = `${tableName}-restored`;
    expect(await restoreSnapshot(db, join(directory, file!), restoredTable)).toBe(lines.length);
    const restored: string[] = [];
    for await (const page of paginateScan({ client: db }, { TableName: restoredTable })) {
      for (const item of page.Items ?? []) restored.push(JSON.stringify(item));
    }
    const canonical = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(canonical)
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(
              Object.keys(value)
                .sort()
                .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
            )
          : value;
    const sorted = (items: readonly unknown[]) => items.map((item) => JSON.stringify(canonical(item))).sort();
    expect(sorted(restored.map((item) => JSON.parse(item)))).toEqual(sorted(lines));

    // A controller started on the restored table (with the network's keys) serves the same network: same admin, same
    // entities, and the integrity check finds the restored table consistent.
    const onRestored = await startTestController({ tableName: restoredTable, pkiKeys });
    try {
      const restoredAdmin = await onRestored.login();
      const listed = async (on: TestController, token: string, path: string) => {
        const page = await on.call('GET', `${M}${path}?limit=500`, { token });
        expect(page.status, page.text).toBe(200);
        return (page.body.data as { id: string; name: string }[]).map(({ id, name }) => `${id}:${name}`).sort();
      };
      for (const path of ['/identities', '/services', '/service-policies', '/edge-routers', '/config-types']) {
        expect(await listed(onRestored, restoredAdmin, path), path).toEqual(await listed(controller(), admin(), path));
      }
      const check = await onRestored.call('POST', `${M}/database/check-data-integrity`, { token: restoredAdmin });
      expect(check.status, check.text).toBe(202);
      const results = () => onRestored.call('GET', `${M}/database/data-integrity-results`, { token: restoredAdmin });
      await expect.poll(async () => (await results()).body.data.inProgress, { timeout: 10_000 }).toBe(false);
      expect((await results()).body.data.results).toEqual([]);
    } finally {
      await onRestored.close();
    }

    controller().advanceClock(61_000);
    expect((await call('POST', '/database/snapshot')).status).toBe(200);
    expect(readdirSync(directory)).toHaveLength(2);
    expect(existsSync(directory)).toBe(true);
  });
});
