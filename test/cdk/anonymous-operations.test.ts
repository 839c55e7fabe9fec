import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GroupHandler } from '#shared/http/create-group-handler.ts';
import { resourcesOf } from '#shared/routes/resource-paths.ts';
import type { OperationGroup } from '#shared/routes/route.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { ANONYMOUS_OPERATIONS } from '../../cdk/anonymous-operations.ts';
import { operationGroupsOf } from '../../cdk/operation-groups.ts';
import { lambdaContext, NO_TABLE_ENVIRONMENT, proxyEvent } from '../support/lambda-event.ts';

/**
 * cdk-nag cannot check the API's authorization (the REST API is one OpenAPI body, cdk/anonymous-operations.ts says
 * why), so this does: each group's Lambda handler, as API Gateway invokes it, is sent every route of its group
 * without a session.
 */

const ENVIRONMENT = { ...NO_TABLE_ENVIRONMENT, AWS_MAX_ATTEMPTS: '1' };
const saved = Object.fromEntries(Object.keys(ENVIRONMENT).map((name) => [name, process.env[name]]));
const handlers = new Map<OperationGroup, GroupHandler>();

beforeAll(async () => {
  // The handlers build their deps from the environment on first use, as on AWS; no table is reachable.
  Object.assign(process.env, ENVIRONMENT);
  for (const group of operationGroupsOf(ROUTES)) {
    const module = (await import(`../../functions/${group}/handler.ts`)) as { handler: GroupHandler };
    handlers.set(group, module.handler);
  }
}, 120_000);
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('the anonymous operations', () => {
  it('are exactly the routes the route table marks anonymous, each with its reason', () => {
    const anonymous = [...new Set(ROUTES.filter((route) => route.auth === 'none').map((route) => route.operation))];
    expect(Object.keys(ANONYMOUS_OPERATIONS).sort()).toEqual(anonymous.sort());
    for (const [operation, reason] of Object.entries(ANONYMOUS_OPERATIONS)) expect(reason, operation).not.toBe('');
  });
});

describe('every other route', () => {
  const guarded = ROUTES.filter((route) => route.auth !== 'none');

  it('is most of the API', () => {
    expect(guarded.length).toBeGreaterThan(150);
  });

  it('is told apart by the handler: an anonymous route answers without a session', async () => {
    const response = await handlers.get('info')!(proxyEvent('GET', '/edge/client/v1/version'), lambdaContext());
    expect(response.statusCode).toBe(200);
  });

  it('answers 401 UNAUTHORIZED from its Lambda handler when no session comes with the request', async () => {
    const answers: string[] = [];
    for (const route of guarded) {
      const { resource } = resourcesOf(route)[0]!;
      const pathParameters = Object.fromEntries(
        [...resource.matchAll(/\{([^}]+)\}/g)].map(([, name]) => [name!, 'some-id']),
      );
      const response = await handlers.get(route.group)!(
        proxyEvent(route.method, resource, { pathParameters }),
        lambdaContext(),
      );
      const code = (JSON.parse(response.body) as { error?: { code?: string } }).error?.code;
      answers.push(`${route.method} ${resource} (${route.operation}, ${route.auth}): ${response.statusCode} ${code}`);
    }
    expect(answers.filter((answer) => !answer.endsWith(': 401 UNAUTHORIZED'))).toEqual([]);
  }, 120_000);
});
