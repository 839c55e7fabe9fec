import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { ControllerContext } from '#shared/http/middleware/controller-context.ts';
import { createLogger, type Logger } from '#shared/log/logger.ts';

/** What a test sets of a proxy event; the rest is as API Gateway fills it for a request without a session. */
export interface ProxyEventOptions {
  readonly pathParameters?: Record<string, string>;
  readonly headers?: Record<string, string>;
  readonly query?: Record<string, string>;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** API Gateway's request id (`requestContext.requestId`). */
  readonly requestId?: string;
}

/** A REST API proxy event as API Gateway sends it for one resource of the route table. */
export function proxyEvent(method: string, resource: string, options: ProxyEventOptions = {}): APIGatewayProxyEvent {
  const path = resource.replace(/\{([^}]+)\}/g, (_, name: string) => options.pathParameters?.[name] ?? name);
  return {
    resource,
    path,
    httpMethod: method,
    headers: { Host: 'abc123.execute-api.eu-west-1.amazonaws.com', ...options.headers },
    multiValueHeaders: {},
    queryStringParameters: options.query ?? null,
    multiValueQueryStringParameters: options.query
      ? Object.fromEntries(Object.entries(options.query).map(([name, value]) => [name, [value]]))
      : null,
    pathParameters: options.pathParameters ?? null,
    stageVariables: null,
    body: options.body === undefined ? null : JSON.stringify(options.body),
    isBase64Encoded: false,
    requestContext: {
      ...(options.requestId !== undefined ? { requestId: options.requestId } : {}),
      stage: 'prod',
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      identity: { sourceIp: '198.51.100.7', clientCert: null },
    },
  } as unknown as APIGatewayProxyEvent;
}

/** The Lambda context the handlers read: a request id and time left, and whatever else a test names. */
export function lambdaContext(overrides: Readonly<Record<string, unknown>> = {}): ControllerContext {
  return {
    awsRequestId: 'req-1',
    getRemainingTimeInMillis: () => 10_000,
    ...overrides,
  } as unknown as ControllerContext;
}

/**
 * The environment of a handler with no table to reach: a DynamoDB endpoint nothing listens on and dummy credentials,
 * so a read fails at once instead of waiting on the SDK's search for credentials.
 */
export const NO_TABLE_ENVIRONMENT = {
  TABLE_NAME: 'no-table',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  LOG_LEVEL: 'error',
} as const;

/**
 * The logger of a group handler a test builds itself (`createGroupHandler` on deps of its own): errors only, so the
 * request line each handled request writes stays out of the test's output. `LOG_LEVEL` in the environment a test
 * configures from does not reach it: a logger reads the process's.
 */
export function quietLogger(): Logger {
  return createLogger({}, { level: 'error' });
}
