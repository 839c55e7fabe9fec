import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { startDynamoDbLocal } from '#local/dynamodb-local.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { loadConfig } from '#shared/config.ts';
import { identities } from '#shared/entities/identity.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'controller-data-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function withPersistentStore<T>(run: (deps: ReturnType<typeof createDeps>) => Promise<T>): Promise<T> {
  const dynamo = await startDynamoDbLocal({ dataDir });
  const deps = createDeps({
    ...loadConfig({}),
    tableName: 'controller',
    dynamoDbEndpoint: dynamo.endpoint,
    // The PKI keys live in the data directory as `npm start` keeps them, so the restart finds the CA's keys.
    pkiKeys: { kind: 'files', directory: join(dataDir, 'pki') },
  });
  try {
    await ensureTable(deps.store.db, 'controller');
    return await run(deps);
  } finally {
    deps.store.db.destroy();
    await dynamo.stop();
  }
}

describe('bootstrap', () => {
  it('seeds once, and a restart on the same data directory keeps everything and changes nothing', async () => {
    const first = await withPersistentStore((deps) =>
      bootstrap(deps, { adminUsername: 'admin', adminPassword: 'first-password' }),
    );

    const second = await withPersistentStore(async (deps) => {
      const result = await bootstrap(deps, { adminUsername: 'admin', adminPassword: 'other-password' });
      const { Items = [] } = await deps.store.db.send(new ScanCommand({ TableName: 'controller' }));
      const admin = await deps.store.get(identities, first.adminIdentityId!);
      return { result, items: Items, admin };
    });

    expect(first.adminCreated).toBe(true);
    expect(second.result.adminCreated).toBe(false);
    expect(second.admin?.doc).toMatchObject({ name: 'Default Admin', isAdmin: true, isDefaultAdmin: true });
    const types = second.items.filter((item) => String(item.PK).startsWith('identity-types#')).map((item) => item.id);
    expect(types.sort()).toEqual(['Default', 'Router']);
    expect(second.items.filter((item) => item.PK === 'auth-policies#default' && item.SK === 'META')).toHaveLength(1);
    expect(second.items.filter((item) => item.PK === 'SYSTEM#network-ca')).toHaveLength(1);
    expect(second.items.filter((item) => String(item.PK).startsWith('identities#') && item.SK === 'META')).toHaveLength(
      1,
    );
  }, 120_000);
});
