import { afterEach, describe, expect, it } from 'vitest';
import { createDeps } from '#functions/create-deps.ts';
import { operations } from '#functions/info/handler.ts';
import { loadConfig } from '#shared/config.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { lambdaContext, NO_TABLE_ENVIRONMENT, proxyEvent, quietLogger } from '../support/lambda-event.ts';

/** What esbuild's `define` puts in a bundle (cdk/build-stamp.ts), set here as a global as a test's stand-in. */
const STAMP = { version: 'v1.2.3', revision: '0123456789ab', buildDate: '2026-11-20T10:11:12Z' };
const stamped = globalThis as { ZITI_BUILD_STAMP?: typeof STAMP };

afterEach(() => {
  delete stamped.ZITI_BUILD_STAMP;
});

async function versionDocument(env: Record<string, string> = {}) {
  const deps = { ...createDeps(loadConfig({ ...NO_TABLE_ENVIRONMENT, ...env })), logger: quietLogger() };
  const handler = createGroupHandler('info', ROUTES, operations, () => deps);
  const response = await handler(proxyEvent('GET', '/edge/client/v1/version'), lambdaContext());
  deps.store.db.destroy();
  expect(response.statusCode).toBe(200);
  return (JSON.parse(response.body) as { data: Record<string, unknown> }).data;
}

describe('the build stamp', () => {
  it('is what GET /version reports: the version, git revision and build date stamped into the bundle', async () => {
    stamped.ZITI_BUILD_STAMP = STAMP;
    expect(await versionDocument()).toMatchObject(STAMP);
  });

  it('gives way to the environment, and without either /version says it does not know', async () => {
    stamped.ZITI_BUILD_STAMP = STAMP;
    expect(await versionDocument({ CONTROLLER_VERSION: 'v9.9.9' })).toMatchObject({ ...STAMP, version: 'v9.9.9' });
    delete stamped.ZITI_BUILD_STAMP;
    expect(await versionDocument()).toMatchObject({ revision: 'unknown', buildDate: '1970-01-01T00:00:00Z' });
  });
});
