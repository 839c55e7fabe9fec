import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { loadConfig } from '#shared/config.ts';
import type { ControllerContext } from '#shared/http/middleware/controller-context.ts';
import { lambdaContext, proxyEvent } from '../support/lambda-event.ts';

type Handler = (event: APIGatewayProxyEvent, context: ControllerContext) => Promise<APIGatewayProxyResult>;

const tableName = `lambda-${Date.now()}`;

beforeAll(async () => {
  // The exported Lambda handlers build their deps from the environment on first use, as on AWS.
  process.env.TABLE_NAME = tableName;
  process.env.DYNAMODB_ENDPOINT = inject('dynamoEndpoint');
  process.env.LOG_LEVEL = 'error';
  const deps = createDeps(loadConfig());
  await ensureTable(deps.store.db, tableName);
  await bootstrap(deps, { adminUsername: 'lambda-admin', adminPassword: 'lambda-password' });
  deps.store.db.destroy();
});
afterAll(() => {
  delete process.env.TABLE_NAME;
  delete process.env.DYNAMODB_ENDPOINT;
  delete process.env.LOG_LEVEL;
});

describe('the exported Lambda handlers', () => {
  it('answer the version with the stage in the base URLs', async () => {
    const { handler } = (await import('#functions/info/handler.ts')) as { handler: Handler };

    const result = await handler(proxyEvent('GET', '/edge/client/v1/version'), lambdaContext());

    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body).data.apiVersions['edge-client'].v1.apiBaseUrls).toEqual([
      'https://abc123.execute-api.eu-west-1.amazonaws.com/prod/edge/client/v1',
    ]);
  });

  it('answer 503 TIMEOUT in the error envelope, named by the request id, when the invocation is about to run out', async () => {
    const authentication = (await import('#functions/authentication/handler.ts')) as { handler: Handler };
    const result = await authentication.handler(
      proxyEvent('POST', '/edge/management/v1/authenticate', {
        query: { method: 'password' },
        body: { username: 'lambda-admin', password: 'lambda-password' },
        headers: { 'Content-Type': 'application/json' },
        requestId: 'gw-timed-out',
      }),
      // Lambda would end the invocation 251 ms from now: middy answers 250 ms before, while the login still works.
      lambdaContext({ getRemainingTimeInMillis: () => 251 }),
    );

    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body).error).toMatchObject({ code: 'TIMEOUT', requestId: 'gw-timed-out' });
  });

  it('log in and serve the current identity from the same table', async () => {
    const authentication = (await import('#functions/authentication/handler.ts')) as { handler: Handler };
    const identities = (await import('#functions/identities/handler.ts')) as { handler: Handler };

    const login = await authentication.handler(
      proxyEvent('POST', '/edge/management/v1/authenticate', {
        query: { method: 'password' },
        body: { username: 'lambda-admin', password: 'lambda-password' },
        headers: { 'Content-Type': 'application/json' },
      }),
      lambdaContext(),
    );
    const token = login.headers?.['zt-session'] as string;
    const me = await identities.handler(
      proxyEvent('GET', '/edge/management/v1/current-identity', { headers: { 'ZT-Session': token } }),
      lambdaContext(),
    );

    expect(login.statusCode).toBe(200);
    expect(JSON.parse(login.body).data.ipAddress).toBe('198.51.100.7');
    expect(me.statusCode).toBe(200);
    expect(JSON.parse(me.body).data.name).toBe('Default Admin');
  });

  it('answer a resource of another group with 404 in the error envelope', async () => {
    const { handler } = (await import('#functions/info/handler.ts')) as { handler: Handler };

    const result = await handler(proxyEvent('GET', '/edge/management/v1/identities'), lambdaContext());

    expect(result.statusCode).toBe(404);
    expect(JSON.parse(result.body).error.code).toBe('NOT_FOUND');
  });

  it('answer a method the resource does not serve (its ANY catch-all) with 405 in the error envelope', async () => {
    const { handler } = (await import('#functions/identities/handler.ts')) as { handler: Handler };

    const result = await handler(proxyEvent('PUT', '/edge/management/v1/identities'), lambdaContext());

    expect(result.statusCode).toBe(405);
    expect(JSON.parse(result.body).error.code).toBe('METHOD_NOT_ALLOWED');
  });
});
