import { describe, expect, it } from 'vitest';
import { createDeps } from '#functions/create-deps.ts';
import { operations } from '#functions/info/handler.ts';
import { loadConfig } from '#shared/config.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { lambdaContext, NO_TABLE_ENVIRONMENT, proxyEvent, quietLogger } from '../support/lambda-event.ts';

const MTLS = 'https://mtls.example.test';

/** `GET /version` through the info function, configured with the front door at `sdkBaseUrl`, addressed to `host`. */
async function versionAt(sdkBaseUrl: string, host: string) {
  const deps = {
    ...createDeps(loadConfig({ ...NO_TABLE_ENVIRONMENT, MTLS_BASE_URL: MTLS, SDK_BASE_URL: sdkBaseUrl })),
    logger: quietLogger(),
  };
  const handler = createGroupHandler('info', ROUTES, operations, () => deps);
  try {
    return await handler(proxyEvent('GET', '/edge/client/v1/version', { headers: { Host: host } }), lambdaContext());
  } finally {
    deps.store.db.destroy();
  }
}

/** Whether the answer sends an SDK on to the mTLS address, as only the front door's does. */
function sendsOn(response: Awaited<ReturnType<typeof versionAt>>): boolean {
  if (response.statusCode !== 421) return false;
  expect(response.headers?.['ziti-ctrl-address']).toBe(MTLS);
  return true;
}

describe('the SDKs’ front door', () => {
  it('is its address however the Host writes it: any case, a trailing dot, the port 443 or none', async () => {
    for (const host of [
      'sdk.example.test',
      'SDK.Example.Test',
      'sdk.example.test.',
      'sdk.example.test:443',
      'Sdk.Example.Test.:443',
    ]) {
      expect(sendsOn(await versionAt('https://sdk.example.test', host)), host).toBe(true);
    }
    // Named in the configuration with the port 443 or a trailing dot, it is the same door.
    expect(sendsOn(await versionAt('https://sdk.example.test:443', 'sdk.example.test'))).toBe(true);
    expect(sendsOn(await versionAt('https://sdk.example.test.', 'sdk.example.test:443'))).toBe(true);
  });

  it('on another port is that port alone, written any way', async () => {
    for (const host of ['sdk.example.test:8443', 'SDK.example.test.:8443']) {
      expect(sendsOn(await versionAt('https://sdk.example.test:8443', host)), host).toBe(true);
    }
    for (const host of ['sdk.example.test', 'sdk.example.test:443']) {
      expect(sendsOn(await versionAt('https://sdk.example.test:8443', host)), host).toBe(false);
    }
  });

  it('is no other address, nor text that merely contains its name, however lenient the comparison', async () => {
    expect(sendsOn(await versionAt('https://sdk.example.test', 'SDK.Example.Test.:443'))).toBe(true);
    for (const host of [
      'sdk.example.test:8443',
      'other.example.test',
      'sdk.example.test..',
      'user@sdk.example.test',
      'sdk.example.test/x',
      '',
    ]) {
      const response = await versionAt('https://sdk.example.test', host);
      expect(response.statusCode, host).toBe(200);
      expect(response.headers?.['ziti-ctrl-address']).toBeUndefined();
    }
  });
});
