import { readFile } from 'node:fs/promises';
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { bodySchema } from '#shared/openapi/build-openapi.ts';
import { operationSummary, WRITTEN_SUMMARIES } from '#shared/openapi/operation-summary.ts';
import type { DocumentedApi as Api } from '#shared/routes/route.ts';
import { route } from '#shared/routes/route-builder.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { APIS, OPENAPI_FILES } from '../../scripts/write-openapi.ts';

/** The documents as committed: the edge APIs' are what `/specs/{id}/spec` answers with. */
async function servedText(api: Api): Promise<string> {
  return readFile(OPENAPI_FILES[api], 'utf8');
}

describe('the served OpenAPI documents, by real validators', () => {
  it.each(APIS)('%s: swagger-parser validates it against the OpenAPI 3.0 schema', async (api) => {
    const document = JSON.parse(await servedText(api));

    await expect(SwaggerParser.validate(document)).resolves.toBeDefined();
  });

  // The warnings of Redocly's recommended set (an unused component, an operation without a 2xx or 4xx answer, an
  // ambiguous path, a missing license) are generator bugs as much as its errors are, so none is let through. Rules
  // outside the set that would change the wire contract (problem+json errors, plural path segments, no verbs in
  // paths) are not taken: the paths and the error envelope are OpenZiti's.
  it.each(APIS)('%s: Redocly lint with the recommended rules finds no error and no warning', async (api) => {
    const config = await createConfig({ extends: ['recommended'] });

    const problems = await lintFromString({ source: await servedText(api), absoluteRef: `${api}.json`, config });

    const found = problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
    expect(found).toEqual([]);
  });
});

describe('bodySchema', () => {
  it('says base64 in OpenAPI 3.0 words (`format: byte`), not with 3.1’s `contentEncoding`', () => {
    const schema = bodySchema(z.object({ secret: z.base64(), contentEncoding: z.string() }));

    expect(schema).toMatchObject({
      properties: { secret: { type: 'string', format: 'byte' }, contentEncoding: { type: 'string' } },
    });
    expect(JSON.stringify(schema)).not.toContain('"contentEncoding":"');
  });
});

describe('operationSummary', () => {
  it('says a collection verb in words, with the entity from the path', () => {
    const summary = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, operation: string) =>
      operationSummary(route(method, path, ['management'], 'policies', 'admin', operation));

    expect(summary('GET', '/service-policies', 'listServicePolicies')).toBe('List service policies');
    expect(summary('POST', '/external-jwt-signers', 'createExternalJwtSigner')).toBe('Create an external JWT signer');
    expect(summary('GET', '/cas/{id}', 'detailCa')).toBe('Retrieve a CA');
    expect(summary('PUT', '/identities/{id}', 'updateIdentity')).toBe('Update all fields of an identity');
    expect(summary('PATCH', '/api-sessions/{id}', 'patchAPISession')).toBe('Update the given fields of an API session');
    expect(summary('DELETE', '/config-types/{id}', 'deleteConfigType')).toBe('Delete a config type');
    expect(summary('GET', '/edge-routers/{id}/service-edge-router-policies', 'listEdgeRouterSERPs')).toBe(
      'List the service edge router policies of an edge router',
    );
  });

  it('takes the written summary of an operation its name does not explain, and the name’s words as a last resort', () => {
    const summary = (path: string, operation: string) =>
      operationSummary(route('POST', path, ['client'], 'pki', 'none', operation));

    expect(summary('/enroll/ott', 'enrollOtt')).toBe('Enroll an identity with a one-time token and a CSR');
    expect(summary('/things/{id}/polish', 'polishThingNow')).toBe('Polish thing now');
  });

  it('has written summaries only for operations of the route table', () => {
    const operations = new Set(ROUTES.map((r) => r.operation));

    expect(Object.keys(WRITTEN_SUMMARIES).filter((operation) => !operations.has(operation))).toEqual([]);
  });

  it('tells the operations of one API apart', async () => {
    for (const api of APIS) {
      const document = JSON.parse(await servedText(api)) as {
        paths: Record<string, Record<string, { summary: string }>>;
      };
      const summaries = Object.values(document.paths).flatMap((item) => Object.values(item).map((o) => o.summary));

      expect(
        summaries.filter((summary, index) => summaries.indexOf(summary) !== index),
        api,
      ).toEqual([]);
    }
  });
});
