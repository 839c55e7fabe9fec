import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ROUTES } from '#shared/routes/route-table.ts';
import { expectMatchesSpec, specMismatches } from '../contract/openziti-spec.ts';
import { useTestController } from '../support/use-controller.ts';

const controller = useTestController();

const APIS = [
  { api: 'client', base: '/edge/client/v1' },
  { api: 'management', base: '/edge/management/v1' },
] as const;

describe('API specs', () => {
  for (const { api, base } of APIS) {
    it(`lists both documents to anonymous callers on the ${api} API`, async () => {
      const response = await controller().call('GET', `${base}/specs`);

      expect(response.status).toBe(200);
      expectMatchesSpec(api, 'GET', '/specs', 200, response.body);
      expect(response.body.data).toEqual([
        expect.objectContaining({
          id: 'edge-client',
          name: 'edge-client',
          _links: { self: { href: './specs/edge-client' }, spec: { href: './specs/edge-client/spec' } },
        }),
        expect.objectContaining({ id: 'edge-management', name: 'edge-management' }),
      ]);
    });

    it(`details each document on the ${api} API, and answers 404 for another id`, async () => {
      const detail = await controller().call('GET', `${base}/specs/edge-management`);
      const missing = await controller().call('GET', `${base}/specs/swagger`);

      expect(detail.status).toBe(200);
      expectMatchesSpec(api, 'GET', '/specs/{id}', 200, detail.body);
      expect(detail.body.data).toMatchObject({
        id: 'edge-management',
        name: 'edge-management',
        _links: { self: { href: './specs/edge-management' }, spec: { href: './specs/edge-management/spec' } },
      });
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('NOT_FOUND');
    });
  }

  it('serves each document raw, as JSON, listing every route its API serves', async () => {
    for (const { api, base } of APIS) {
      const id = api === 'client' ? 'edge-client' : 'edge-management';
      const response = await controller().call('GET', `${base}/specs/${id}/spec`);

      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/json');
      // The OpenZiti document envelopes the body (`{data: string}`); the reference serves it raw, and so do we.
      expect(specMismatches(api, 'GET', '/specs/{id}/spec', 200, response.body).length).toBeGreaterThan(0);
      const document = response.body;
      expect(document.openapi).toBe('3.0.3');
      expect(document.servers).toEqual([{ url: base }]);
      for (const route of ROUTES.filter((r) => r.apis.includes(api))) {
        expect(document.paths[route.path]?.[route.method.toLowerCase()]?.operationId, route.path).toBe(route.operation);
      }
      const served = new Set(ROUTES.filter((r) => r.apis.includes(api)).map((r) => `${r.method} ${r.path}`));
      const otherOnly = ROUTES.filter((r) => !served.has(`${r.method} ${r.path}`));
      for (const route of otherOnly) {
        const operation = document.paths[route.path]?.[route.method.toLowerCase()];
        expect(operation, `${route.method} ${route.path}`).toBeUndefined();
      }
    }
  });

  it('serves either document on either API', async () => {
    const fromClient = await controller().call('GET', '/edge/client/v1/specs/edge-management/spec');

    expect(fromClient.status).toBe(200);
    expect(fromClient.body.servers).toEqual([{ url: '/edge/management/v1' }]);
  });

  it('answers a caller that asks for YAML only with the same document as text/yaml', async () => {
    const response = await controller().call('GET', '/edge/client/v1/specs/edge-client/spec', {
      headers: { accept: 'text/yaml' },
    });
    const json = await controller().call('GET', '/edge/client/v1/specs/edge-client/spec');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/yaml');
    expect(parseYaml(response.text)).toEqual(json.body);
  });

  it('answers 404 for the body of an unknown document', async () => {
    const response = await controller().call('GET', '/edge/management/v1/specs/nope/spec');

    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
  });
});
