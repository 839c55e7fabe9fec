import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GROUP_OPERATIONS } from '#local/group-operations.ts';
import { documented } from '#shared/http/operation.ts';
import { buildOpenApi, type OpenApiDocument, pathParameters } from '#shared/openapi/build-openapi.ts';
import { route } from '#shared/routes/route-builder.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { APIS, generateOpenApiDocuments, OPENAPI_FILES } from '../../scripts/write-openapi.ts';

const documents = await generateOpenApiDocuments();

function operationsOf(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
  );
}

describe('the OpenAPI documents', () => {
  it('are what `npm run openapi` writes now (run it after changing routes or request schemas)', async () => {
    for (const api of APIS) {
      const committed = JSON.parse(await readFile(OPENAPI_FILES[api], 'utf8'));
      expect(committed, `shared/openapi/generated/${api}.json is stale: run npm run openapi`).toEqual(
        JSON.parse(JSON.stringify(documents[api])),
      );
    }
  });

  it('list every route of the table for its API, under its operationId, and nothing else', () => {
    for (const api of APIS) {
      const expected = ROUTES.filter((r) => r.apis.includes(api)).map((r) => `${r.method} ${r.path} ${r.operation}`);
      expect(operationsOf(documents[api]).sort()).toEqual(expected.sort());
      expect(documents[api].openapi).toBe('3.0.3');
    }
  });

  it('are valid JSON with every path parameter declared', () => {
    for (const api of APIS) {
      const document = JSON.parse(JSON.stringify(documents[api])) as OpenApiDocument;
      for (const [path, item] of Object.entries(document.paths)) {
        expect(path.startsWith('/'), path).toBe(true);
        for (const operation of Object.values(item)) {
          const declared = (operation.parameters ?? []) as { name: string; in: string }[];
          expect(declared.filter((p) => p.in === 'path').map((p) => p.name)).toEqual(pathParameters(path));
        }
      }
    }
  });

  it('require a zt-session on every route but the anonymous ones', () => {
    for (const api of APIS) {
      for (const r of ROUTES.filter((r) => r.apis.includes(api))) {
        const operation = documents[api].paths[r.path]![r.method.toLowerCase()]!;
        expect(operation.security, `${r.method} ${r.path}`).toEqual(r.auth === 'none' ? [] : [{ ztSession: [] }]);
        expect(Object.keys(operation.responses).includes('401'), `${r.method} ${r.path}`).toBe(r.auth !== 'none');
      }
    }
    expect(documents.management.components.securitySchemes).toEqual({
      ztSession: { type: 'apiKey', in: 'header', name: 'zt-session' },
    });
  });

  it('give kit lists their query and kit writes their request schema', () => {
    const identities = documents.management.paths['/identities']!;
    const listParams = (identities.get!.parameters as { name: string }[]).map((p) => p.name);
    const body = identities.post!.requestBody as {
      content: { 'application/json': { schema: { required: string[] } } };
    };

    expect(listParams).toEqual(['limit', 'offset', 'filter', 'sort', 'roleFilter', 'roleSemantic']);
    expect(identities.get!.responses['200']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/listEnvelope' } } },
    });
    expect(documents.client.paths['/version']!.get!.responses['200']).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/envelope' } } },
    });
    expect(body.content['application/json'].schema.required).toEqual(expect.arrayContaining(['name', 'type']));
    expect(Object.keys(identities.post!.responses)).toEqual(['201', '400', '401', '429']);
    expect(Object.keys(documents.management.paths['/identities/{id}']!.delete!.responses)).toEqual([
      '200',
      '401',
      '404',
      '409',
      '429',
    ]);
  });

  it('hold request schemas a JSON Schema validator compiles', async () => {
    // OpenAPI 3.0 schemas: `nullable` is a keyword of that dialect, which ajv knows.
    const ajv = new Ajv({ strict: false });
    let compiled = 0;
    for (const api of APIS) {
      for (const item of Object.values(documents[api].paths)) {
        for (const operation of Object.values(item)) {
          const schema = (operation.requestBody as { content: { 'application/json': { schema: object } } } | undefined)
            ?.content['application/json'].schema;
          if (!schema) continue;
          expect(() => ajv.compile(schema), operation.operationId).not.toThrow();
          compiled++;
        }
      }
    }
    // One per route of each API whose operation declares a body schema: none was skipped. Operations loaded on first
    // use declare theirs in their module.
    const docs = await Promise.all(
      ROUTES.map(async (r) => {
        const operation = GROUP_OPERATIONS[r.group][r.operation];
        return ((await operation?.load?.()) ?? operation)?.docs;
      }),
    );
    const withBody = ROUTES.filter((_, index) => docs[index]?.body);
    expect(compiled).toBe(withBody.reduce((sum, r) => sum + r.apis.length, 0));
    expect(compiled).toBeGreaterThan(0);
  });
});

describe('buildOpenApi', () => {
  it('builds a document from routes and what their operations say about themselves', () => {
    const schema = z.object({ name: z.string(), size: z.number().int().optional() });
    const create = documented(async () => ({ statusCode: 201, body: {} }), { body: schema });
    const routes = [
      route('GET', '/things/{id}/parts/{partId}', ['management'], 'info', 'admin', 'detailThingPart'),
      route('POST', '/things', ['management'], 'info', 'admin', 'createThing'),
      route('GET', '/open', ['client'], 'info', 'none', 'listOpen'),
    ];
    const document = buildOpenApi(
      'management',
      routes,
      (r) => (r.operation === 'createThing' ? create.docs : undefined),
      '9',
    );

    expect(Object.keys(document.paths)).toEqual(['/things/{id}/parts/{partId}', '/things']);
    expect(document.info.version).toBe('9');
    expect(document.paths['/things/{id}/parts/{partId}']!.get!.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'partId', in: 'path', required: true, schema: { type: 'string' } },
    ]);
    expect(document.paths['/things']!.post!.requestBody).toEqual({
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { name: { type: 'string' }, size: expect.objectContaining({ type: 'integer' }) },
            required: ['name'],
          },
        },
      },
    });
  });
});
