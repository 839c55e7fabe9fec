import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { startDynamoDbLocal } from '#local/dynamodb-local.ts';
import { privateDirectory } from '#local/private-directory.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { loadConfig } from '#shared/config.ts';
import { identities } from '#shared/entities/identity.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'controller-data-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/**
 * Runs `run` against a table kept in `at.dynamoDir` (the data directory itself unless told), with the PKI keys in
 * `<at.dataDir>/pki` as `npm start` keeps them, so a restart finds the CA's keys.
 */
async function withPersistentStore<T>(
  run: (deps: ReturnType<typeof createDeps>) => Promise<T>,
  at: { dataDir: string; dynamoDir?: string } = { dataDir },
): Promise<T> {
  const dynamo = await startDynamoDbLocal({ dataDir: at.dynamoDir ?? at.dataDir });
  const deps = createDeps({
    ...loadConfig({}),
    tableName: 'controller',
    dynamoDbEndpoint: dynamo.endpoint,
    pkiKeys: { kind: 'files', directory: join(at.dataDir, 'pki') },
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

  it('keeps the data directory its owner’s alone, DynamoDB Local’s file too, tightening what an earlier start left open', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'controller-private-')), '.data');
    const dynamoDir = join(dataDir, 'dynamodb');
    const modeOf = (path: string) => statSync(path).mode & 0o777;
    const files = () => readdirSync(dynamoDir).map((name) => join(dynamoDir, name));
    // As `npm start` does: the data directory first, then DynamoDB Local in it, which writes its file on first use.
    const start = async () => {
      privateDirectory(dataDir);
      await withPersistentStore(
        (deps) => bootstrap(deps, { adminUsername: 'admin', adminPassword: 'private-password' }),
        {
          dataDir,
          dynamoDir,
        },
      );
    };
    try {
      await start();
      expect(modeOf(dataDir)).toBe(0o700);
      expect(modeOf(dynamoDir)).toBe(0o700);
      expect(readdirSync(dynamoDir)).toContain('shared-local-instance.db');
      for (const file of files()) expect(modeOf(file), file).toBe(0o600);

      // What a start before this change left: the umask's modes.
      for (const directory of [dataDir, dynamoDir]) chmodSync(directory, 0o755);
      for (const file of files()) chmodSync(file, 0o644);
      await start();
      expect(modeOf(dataDir)).toBe(0o700);
      expect(modeOf(dynamoDir)).toBe(0o700);
      for (const file of files()) expect(modeOf(file), file).toBe(0o600);
    } finally {
      rmSync(join(dataDir, '..'), { recursive: true, force: true });
    }
  }, 240_000);
});
