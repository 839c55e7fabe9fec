import { describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useTestController } from '../support/use-controller.ts';

const controller = useTestController();

describe('version', () => {
  it.each([
    '/',
    '/version',
    '/edge/client/v1',
    '/edge/client/v1/version',
    '/edge/management/v1',
    '/edge/management/v1/version',
    '/edge/v1/version',
  ])('GET %s answers the version document without authentication', async (path) => {
    const response = await controller().call('GET', path);

    expect(response.status).toBe(200);
    expect(response.body.data.apiVersions['edge-management'].v1.path).toBe('/edge/management/v1');
    expect(response.body.data.apiVersions['edge-client'].v1.apiBaseUrls).toEqual([
      `${controller().origin}/edge/client/v1`,
    ]);
    expect(response.body.data.apiVersions.edge).toEqual(response.body.data.apiVersions['edge-client']);
    expect(response.body.data.apiVersions.fabric.v1).toEqual({
      path: '/fabric/v1',
      apiBaseUrls: [`${controller().origin}/fabric/v1`],
    });
    expect(response.body.meta).toEqual({ apiVersion: '0.0.1', apiEnrollmentVersion: '0.0.1' });
    const template = path.endsWith('/version') ? '/version' : '/';
    expectMatchesSpec(path.includes('management') ? 'management' : 'client', 'GET', template, 200, response.body);
  });

  it('does not advertise OIDC unless configured to, which would switch SDKs away from zt-session', async () => {
    const version = await controller().call('GET', '/version');
    const capabilities = await controller().call('GET', '/edge/client/v1/enumerated-capabilities');

    expect(version.body.data.capabilities).not.toContain('OIDC_AUTH');
    expect(version.body.data.apiVersions['edge-oidc']).toBeUndefined();
    expect(capabilities.status).toBe(200);
    expect(capabilities.body.data).toContain('OIDC_AUTH');
    expectMatchesSpec('client', 'GET', '/enumerated-capabilities', 200, capabilities.body);
  });

  it('enumerates HA_CONTROLLER, which /controllers backs, but does not claim it: this controller is no raft cluster', async () => {
    const version = await controller().call('GET', '/edge/management/v1/version');
    const capabilities = await controller().call('GET', '/edge/management/v1/enumerated-capabilities');

    expect(capabilities.body.data).toEqual(['HA_CONTROLLER', 'OIDC_AUTH']);
    expect(version.body.data.capabilities).toEqual([]);
  });
});

describe('errors from the plumbing', () => {
  it('answers 404 NOT_FOUND in the error envelope for an unknown path', async () => {
    const response = await controller().call('GET', '/edge/management/v1/no-such-thing');

    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
    // API Gateway's kind of request id (a UUID), which the local server gives every request.
    expect(response.body.error.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(response.body.meta.apiVersion).toBe('0.0.1');
  });

  it('answers 405 METHOD_NOT_ALLOWED for a known path with another method', async () => {
    const response = await controller().call('POST', '/version');

    expect(response.status).toBe(405);
    expect(response.body.error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('answers 413 REQUEST_ENTITY_TOO_LARGE above 1 MiB, before authentication', async () => {
    const response = await controller().call('POST', '/edge/client/v1/authenticate?method=password', {
      rawBody: `{"username":"${'x'.repeat(1024 * 1024)}"}`,
      headers: { 'content-type': 'application/json' },
    });

    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe('REQUEST_ENTITY_TOO_LARGE');
  });

  it('answers 413 for a chunked body with no declared length', async () => {
    const response = await controller().call('POST', '/edge/management/v1/current-identity', {
      rawBody: Buffer.alloc(1024 * 1024 + 10, 'a'),
      headers: { 'transfer-encoding': 'chunked', 'content-type': 'application/json' },
    });

    expect(response.status).toBe(413);
  });

  it('answers 400 COULD_NOT_PARSE_BODY for malformed JSON', async () => {
    const response = await controller().call('POST', '/edge/client/v1/authenticate?method=password', {
      rawBody: '{"username": "admin", ',
      headers: { 'content-type': 'application/json' },
    });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('COULD_NOT_PARSE_BODY');
  });

  it('gives every response its own request id', async () => {
    const first = await controller().call('GET', '/nothing-here');
    const second = await controller().call('GET', '/nothing-here');

    expect(first.body.error.requestId).not.toBe(second.body.error.requestId);
  });
});

describe('cross-origin access for browser clients', () => {
  it('answers a preflight with the methods and headers the API takes', async () => {
    const response = await controller().call('OPTIONS', '/edge/management/v1/identities', {
      headers: {
        origin: 'https://console.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'zt-session, content-type',
      },
    });

    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['access-control-allow-methods']).toContain('PATCH');
    expect(response.headers['access-control-allow-headers']).toContain('zt-session');
  });

  it('lets pages read answers and errors, and the session token header', async () => {
    const ok = await controller().call('GET', '/version', { headers: { origin: 'https://console.example.com' } });
    const error = await controller().call('GET', '/edge/management/v1/current-identity', {
      headers: { origin: 'https://console.example.com' },
    });

    for (const response of [ok, error]) {
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['access-control-expose-headers']).toContain('zt-session');
    }
  });
});
