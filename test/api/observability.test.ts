import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it, type MockInstance, vi } from 'vitest';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { loadConfig } from '#shared/config.ts';
import type { ControllerContext } from '#shared/http/middleware/controller-context.ts';
import { proxyEvent, lambdaContext as supportLambdaContext } from '../support/lambda-event.ts';
import { authPolicyBody, managementFixtures } from '../support/management-fixtures.ts';
import { csrFor } from '../support/pki-fixtures.ts';
import { startTestController, type TestController } from '../support/test-controller.ts';

type Handler = (event: APIGatewayProxyEvent, context: ControllerContext) => Promise<APIGatewayProxyResult>;
type Line = Record<string, unknown>;

const NAMESPACE = 'ZitiControllerTest';
const ADMIN = { username: 'observed-admin', password: 'observed-password-1' };

/** Everything written to stdout while the tests run: the functions' log lines and their EMF documents. */
let stdout: string[] = [];
let spy: MockInstance | undefined;

function captureStdout(): void {
  stdout = [];
  spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    stdout.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
}

/** The JSON lines written while `act` ran. */
async function linesOf<T>(act: () => Promise<T>): Promise<{ result: T; lines: Line[] }> {
  const from = stdout.length;
  const result = await act();
  const lines = stdout.slice(from).flatMap((line) => {
    try {
      return [JSON.parse(line) as Line];
    } catch {
      return [];
    }
  });
  return { result, lines };
}

/** The EMF documents among `lines`: each metric with its value and its dimensions. */
function metricsOf(lines: readonly Line[]): { name: string; value: unknown; dimensions: Record<string, unknown> }[] {
  return lines
    .filter((line) => typeof line._aws === 'object')
    .flatMap((line) => {
      const aws = line._aws as {
        CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
      };
      return aws.CloudWatchMetrics.flatMap((directive) => {
        expect(directive.Namespace).toBe(NAMESPACE);
        const dimensionNames = directive.Dimensions.flat();
        return directive.Metrics.map((metric) => ({
          name: metric.Name,
          value: line[metric.Name],
          dimensions: Object.fromEntries(dimensionNames.map((name) => [name, line[name]])),
        }));
      });
    });
}

function logLinesOf(lines: readonly Line[]): Line[] {
  return lines.filter((line) => typeof line.message === 'string');
}

/** A REST API proxy event as API Gateway sends it, with its request id. */
function apiGatewayEvent(
  requestId: string,
  method: string,
  resource: string,
  options: { body?: unknown; query?: Record<string, string> } = {},
): APIGatewayProxyEvent {
  return proxyEvent(method, resource, { ...options, requestId, headers: { 'content-type': 'application/json' } });
}

/** The context Lambda gives the authentication function (its name, version and memory show on every log line). */
function lambdaContext(awsRequestId: string): ControllerContext {
  return supportLambdaContext({
    awsRequestId,
    functionName: 'ZitiController-test-Authentication',
    functionVersion: '7',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:ZitiController-test-Authentication:live',
    memoryLimitInMB: '1024',
  });
}

const LAMBDA_ENVIRONMENT = {
  TABLE_NAME: `observed-${Date.now()}`,
  DYNAMODB_ENDPOINT: inject('dynamoEndpoint'),
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  // What Lambda sets on an on-demand sandbox: Powertools reports the cold start only there.
  AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
  POWERTOOLS_METRICS_NAMESPACE: NAMESPACE,
  POWERTOOLS_SERVICE_NAME: 'ziti-controller-test',
  LOG_LEVEL: 'info',
  // An operator turning on Powertools' event logging must not get passwords and tokens into the log.
  POWERTOOLS_LOGGER_LOG_EVENT: 'true',
};

describe('the exported handlers, invoked as Lambda invokes them', () => {
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const [name, value] of Object.entries(LAMBDA_ENVIRONMENT)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    const deps = createDeps(loadConfig());
    await ensureTable(deps.store.db, LAMBDA_ENVIRONMENT.TABLE_NAME);
    await bootstrap(deps, { adminUsername: ADMIN.username, adminPassword: ADMIN.password });
    deps.store.db.destroy();
    captureStdout();
  });
  afterAll(() => {
    spy?.mockRestore();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  const login = (handler: Handler, requestId: string, awsRequestId: string, password: string) =>
    handler(
      apiGatewayEvent(requestId, 'POST', '/edge/management/v1/authenticate', {
        query: { method: 'password' },
        body: { username: ADMIN.username, password },
      }),
      lambdaContext(awsRequestId),
    );

  it('stamps the request ids and the cold-start flag on every line of a login, never its password or token', async () => {
    const { handler } = (await import('#functions/authentication/handler.ts')) as { handler: Handler };

    const first = await linesOf(() => login(handler, 'gw-login-1', 'lambda-login-1', ADMIN.password));
    const second = await linesOf(() => login(handler, 'gw-login-2', 'lambda-login-2', ADMIN.password));

    expect(first.result.statusCode).toBe(200);
    const token = JSON.parse(first.result.body).data.token as string;
    const firstLogs = logLinesOf(first.lines);
    expect(firstLogs.map((line) => line.message)).toEqual(expect.arrayContaining(['api session created', 'request']));
    for (const line of firstLogs) {
      expect(line).toMatchObject({
        requestId: 'gw-login-1',
        function_request_id: 'lambda-login-1',
        cold_start: true,
        function_name: 'ZitiController-test-Authentication',
        service: 'ziti-controller-test',
      });
    }
    // Only the sandbox's first invocation is its cold start.
    for (const line of logLinesOf(second.lines)) {
      expect(line).toMatchObject({ requestId: 'gw-login-2', function_request_id: 'lambda-login-2', cold_start: false });
    }
    const written = [...first.lines, ...second.lines].map((line) => JSON.stringify(line)).join('\n');
    expect(written).not.toContain(ADMIN.password);
    expect(written).not.toContain(token);

    // The login is counted by method and outcome, and the sandbox's cold start once.
    expect(metricsOf(first.lines)).toEqual(
      expect.arrayContaining([
        {
          name: 'Logins',
          value: 1,
          dimensions: { service: 'ziti-controller-test', method: 'password', outcome: 'success' },
        },
        expect.objectContaining({ name: 'ColdStart', value: 1 }),
      ]),
    );
    expect(metricsOf(second.lines).map((metric) => metric.name)).toEqual(['Logins']);
  });

  it("answers an error with API Gateway's request id, which the request's log lines carry, and counts it", async () => {
    const { handler } = (await import('#functions/authentication/handler.ts')) as { handler: Handler };

    const { result, lines } = await linesOf(() => login(handler, 'gw-refused-1', 'lambda-refused-1', 'wrong-password'));

    expect(result.statusCode).toBe(401);
    const error = JSON.parse(result.body).error;
    expect(error).toMatchObject({ code: 'INVALID_AUTH', requestId: 'gw-refused-1' });
    const logs = logLinesOf(lines);
    expect(logs.find((line) => line.message === 'request')).toMatchObject({
      requestId: 'gw-refused-1',
      function_request_id: 'lambda-refused-1',
      status: 401,
      code: 'INVALID_AUTH',
    });
    for (const line of logs) expect(line.requestId).toBe('gw-refused-1');
    expect(JSON.stringify(lines)).not.toContain('wrong-password');
    expect(metricsOf(lines)).toEqual(
      expect.arrayContaining([
        {
          name: 'Logins',
          value: 1,
          dimensions: { service: 'ziti-controller-test', method: 'password', outcome: 'INVALID_AUTH' },
        },
        { name: 'ClientErrors', value: 1, dimensions: { service: 'ziti-controller-test', code: 'INVALID_AUTH' } },
      ]),
    );
  });

  it("runs the integrity state machine's task with the Lambda request id on its lines", async () => {
    const { handler } = (await import('#functions/integrity/handler.ts')) as {
      handler: (event: unknown, context: ControllerContext) => Promise<unknown>;
    };

    const { result, lines } = await linesOf(() =>
      handler({ action: 'unheard-of', runId: 'run-1' }, lambdaContext('lambda-integrity-1')).catch(
        (error: Error) => error.message,
      ),
    );

    expect(result).toBe('unknown integrity task unheard-of');
    expect(logLinesOf(lines)).toEqual([
      expect.objectContaining({
        message: 'integrity task',
        action: 'unheard-of',
        runId: 'run-1',
        function_request_id: 'lambda-integrity-1',
      }),
    ]);
  });

  it('names the request in an error that no operation answered (an unknown route of the group)', async () => {
    const { handler } = (await import('#functions/info/handler.ts')) as { handler: Handler };

    const { result, lines } = await linesOf(() =>
      handler(apiGatewayEvent('gw-unknown-1', 'GET', '/edge/management/v1/no-such-thing'), lambdaContext('lambda-x')),
    );

    expect(result.statusCode).toBe(404);
    expect(JSON.parse(result.body).error.requestId).toBe('gw-unknown-1');
    expect(logLinesOf(lines).find((line) => line.message === 'request')).toMatchObject({
      requestId: 'gw-unknown-1',
      status: 404,
    });
  });
});

describe('the local server', () => {
  let controller: TestController | undefined;
  const started = () => controller ?? expect.unreachable('started in beforeAll');

  beforeAll(async () => {
    controller = await startTestController({ metricsNamespace: NAMESPACE });
    captureStdout();
    return async () => {
      spy?.mockRestore();
      await controller?.close();
    };
  });

  it("gives every request API Gateway's kind of id: the error body names the id its log lines carry", async () => {
    const from = started().logLines.length;
    const response = await started().call('GET', '/edge/management/v1/identities');

    expect(response.status).toBe(401);
    const requestId = response.body.error.requestId as string;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const lines = started()
      .logLines.slice(from)
      .map((line) => JSON.parse(line) as Line);
    expect(lines.find((line) => line.message === 'request')).toMatchObject({ requestId, status: 401 });
    // Requests get their own ids, also the ones the server answers itself (no route).
    const unrouted = await started().call('GET', '/edge/management/v1/no-such-thing');
    expect(unrouted.status).toBe(404);
    expect(unrouted.body.error.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(unrouted.body.error.requestId).not.toBe(requestId);
  });

  it('counts a lockout once, beside the refused logins that led to it', async () => {
    const admin = await started().login();
    const { createPolicy, userUnder, login } = managementFixtures(started, () => admin);
    const policyId = await createPolicy(authPolicyBody('metered-lock', { maxAttempts: 2, lockoutDurationMinutes: 5 }));
    const user = await userUnder(policyId, 'metered-user');

    const { lines } = await linesOf(async () => {
      for (let attempt = 0; attempt < 3; attempt++) expect((await login(user.username, 'wrong')).status).toBe(401);
    });

    const metrics = metricsOf(lines);
    expect(metrics.filter((metric) => metric.name === 'Lockouts')).toEqual([
      { name: 'Lockouts', value: 1, dimensions: { service: 'ziti-controller' } },
    ]);
    expect(metrics.filter((metric) => metric.name === 'Logins')).toHaveLength(3);
  });

  it('counts an ott enrollment by its method', async () => {
    const token = await started().login();
    const created = await started().call('POST', '/edge/management/v1/identities', {
      token,
      body: { name: 'metered-device', type: 'Device', isAdmin: false, enrollment: { ott: true } },
    });
    expect(created.status).toBe(201);
    const detail = await started().call('GET', `/edge/management/v1/identities/${created.body.data.id}`, { token });
    const { csr } = await csrFor('metered-device');

    const { result, lines } = await linesOf(() =>
      started().call('POST', `/edge/client/v1/enroll?method=ott&token=${detail.body.data.enrollment.ott.token}`, {
        rawBody: csr,
        headers: { 'content-type': 'application/x-pem-file' },
      }),
    );

    expect(result.status, result.text).toBe(200);
    expect(metricsOf(lines)).toEqual([
      { name: 'Enrollments', value: 1, dimensions: { service: 'ziti-controller', method: 'ott' } },
    ]);
  });

  it('counts a session created by its type, and none for a session asked for again', async () => {
    const admin = await started().login();
    const { createPolicy, createdId, userUnder, login } = managementFixtures(started, () => admin);
    const user = await userUnder(await createPolicy(authPolicyBody('metered-sessions')), 'metered-dialer');
    const serviceId = await createdId('/services', { name: 'metered-service' });
    const routerId = await createdId('/edge-routers', { name: 'metered-router' });
    const names = (field: string, id: string) => ({ [field]: [`@${id}`] });
    for (const [path, roles] of [
      [
        '/service-policies',
        { type: 'Dial', ...names('identityRoles', user.identityId), ...names('serviceRoles', serviceId) },
      ],
      ['/edge-router-policies', { ...names('identityRoles', user.identityId), ...names('edgeRouterRoles', routerId) }],
      ['/service-edge-router-policies', { ...names('serviceRoles', serviceId), ...names('edgeRouterRoles', routerId) }],
    ] as const) {
      await createdId(path, { name: `metered${path.replaceAll('/', '-')}`, semantic: 'AnyOf', ...roles });
    }
    const token = (await login(user.username, user.password)).body.data.token as string;
    const dial = () => started().call('POST', '/edge/client/v1/sessions', { token, body: { serviceId, type: 'Dial' } });

    const created = await linesOf(dial);
    const again = await linesOf(dial);

    expect(created.result.status, created.result.text).toBe(201);
    expect(again.result.body.data.id).toBe(created.result.body.data.id);
    const sessionsCreated = (lines: readonly Line[]) =>
      metricsOf(lines).filter((metric) => metric.name === 'SessionsCreated');
    expect(sessionsCreated(created.lines)).toEqual([
      { name: 'SessionsCreated', value: 1, dimensions: { service: 'ziti-controller', type: 'Dial' } },
    ]);
    expect(sessionsCreated(again.lines)).toEqual([]);
  });

  it("counts an integrity run's findings by its mode", async () => {
    const admin = await started().login();
    const { deps } = started();
    const { call } = managementFixtures(started, () => admin);
    /** Starts a run and answers its results once it has ended, with the lines written meanwhile. */
    const run = (mode: 'check' | 'fix') =>
      linesOf(async () => {
        expect((await call('POST', `/database/${mode}-data-integrity`)).status).toBe(202);
        for (let i = 0; i < 200; i++) {
          const results = await call('GET', '/database/data-integrity-results');
          if (!results.body.data.inProgress) return results.body.data.results as unknown[];
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error('the integrity run did not end');
      });
    // A retired filter pack: a finding for a check, removed by a fix.
    await deps.store.db.send(
      new PutCommand({ TableName: deps.config.tableName, Item: { PK: 'FILTERS#services', SK: 'metered' } }),
    );

    const check = await run('check');
    const fix = await run('fix');
    const after = await run('check');

    expect(check.result.length).toBeGreaterThan(0);
    const findings = (lines: readonly Line[]) =>
      metricsOf(lines).filter((metric) => metric.name === 'IntegrityFindings');
    for (const [mode, { result, lines }] of [
      ['check', check],
      ['fix', fix],
      ['check', after],
    ] as const) {
      expect(findings(lines)).toEqual([
        { name: 'IntegrityFindings', value: result.length, dimensions: { service: 'ziti-controller', mode } },
      ]);
    }
    expect(after.result).toEqual([]);
  });
});
