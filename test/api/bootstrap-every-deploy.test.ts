import { randomUUID } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { AdminUsernameMismatch, type BootstrapOptions, bootstrap } from '#shared/bootstrap.ts';
import { loadConfig } from '#shared/config.ts';
import { authPolicies, DEFAULT_AUTH_POLICY_ID } from '#shared/entities/auth-policy.ts';
import { BUILTIN_CONFIG_TYPES } from '#shared/entities/builtin-config-types.ts';
import { configTypes } from '#shared/entities/config-type.ts';
import { postureCheckTypes, SEEDED_POSTURE_CHECK_TYPES } from '#shared/entities/posture-check-types.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { asTableUser, holdToTableGrants, type TableRefusal } from '../support/table-grants.ts';

/**
 * The stack runs the bootstrap on every deploy (its custom resource changes each synth), so a run over a table that
 * is already seeded must change nothing, and a run over a table seeded by an older build must add what is new.
 */

const ADMIN: BootstrapOptions = { adminUsername: 'admin', adminPassword: 'first-deploy-password' };

let deps: Deps;
let tableName: string;
let refusals: readonly TableRefusal[];

/** The bootstrap as its function runs it on a deploy, held to that function's grant on the table. */
const deploy = (options: BootstrapOptions) => asTableUser('bootstrap', () => bootstrap(deps, options));

/** Every item of the table, sorted by key: what two runs are compared by. */
async function everyItem(): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await deps.store.db.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  const key = (item: Record<string, unknown>) => `${String(item.PK)}\u0000${String(item.SK)}`;
  return items.sort((a, b) => key(a).localeCompare(key(b)));
}

beforeAll(async () => {
  tableName = `bootstrap-${randomUUID()}`;
  deps = createDeps({ ...loadConfig({}), tableName, dynamoDbEndpoint: inject('dynamoEndpoint') });
  await ensureTable(deps.store.db, tableName);
  refusals = holdToTableGrants(deps.store.db);
});
afterAll(() => {
  deps.store.db.destroy();
  expect(refusals).toEqual([]);
});

describe('the bootstrap on every deploy', () => {
  it('leaves a seeded table exactly as it was: every item, version and timestamp', async () => {
    const first = await deploy(ADMIN);
    const seeded = await everyItem();

    // A later deploy, even with another generated password in the secret, and a second one after it.
    const second = await deploy({ ...ADMIN, adminPassword: 'a-password-the-secret-has-now' });
    const third = await deploy(ADMIN);

    expect(first).toMatchObject({ adminCreated: true, adminUsername: 'admin' });
    expect(second).toEqual({ adminCreated: false, adminIdentityId: first.adminIdentityId, adminUsername: 'admin' });
    expect(third).toEqual(second);
    expect(await everyItem()).toEqual(seeded);
  });

  it('adds the built-in config types and posture check types a newer build brings, and keeps admin edits', async () => {
    // As if the table had been seeded by a build that knew one config type and one posture check type fewer.
    const [configType] = BUILTIN_CONFIG_TYPES;
    const [postureType] = SEEDED_POSTURE_CHECK_TYPES;
    const storedConfigType = (await deps.store.get(configTypes, configType!.id))!;
    const storedPostureType = (await deps.store.get(postureCheckTypes, postureType!.id))!;
    await deps.store.transact([
      ...deps.store.deleteOps(configTypes, storedConfigType.doc),
      ...deps.store.deleteOps(postureCheckTypes, storedPostureType.doc),
    ]);
    // And an admin renamed the default auth policy since.
    const policy = (await deps.store.get(authPolicies, DEFAULT_AUTH_POLICY_ID))!;
    await deps.store.transact(
      deps.store.replaceOps(authPolicies, policy, { ...policy.doc, name: 'Renamed by an admin' }),
    );

    await deploy(ADMIN);

    expect((await deps.store.get(configTypes, configType!.id))?.doc.name).toBe(configType!.name);
    expect((await deps.store.get(postureCheckTypes, postureType!.id))?.doc.name).toBe(postureType!.name);
    expect((await deps.store.get(authPolicies, DEFAULT_AUTH_POLICY_ID))?.doc.name).toBe('Renamed by an admin');
    // Running again changes nothing more.
    const after = await everyItem();
    await deploy(ADMIN);
    expect(await everyItem()).toEqual(after);
  });

  it('refuses a deploy naming another admin than the one the table has, saying how to go on', async () => {
    const attempt = deploy({ ...ADMIN, adminUsername: 'root', otherAdminUsername: 'refuse' });

    await expect(attempt).rejects.toBeInstanceOf(AdminUsernameMismatch);
    await expect(attempt).rejects.toThrow(
      /adminUsername is "root", but the default admin logs in as "admin".*-c adminUsername=admin.*PATCH \/edge\/management\/v1\/authenticators/,
    );
  });

  it('keeps the admin it has when not asked to refuse (npm start), and creates no second one', async () => {
    const before = await everyItem();
    const result = await deploy({ ...ADMIN, adminUsername: 'root' });

    expect(result).toMatchObject({ adminCreated: false, adminUsername: 'admin' });
    expect(await everyItem()).toEqual(before);
  });
});
