import middy from '@middy/core';
import httpEventNormalizer from '@middy/http-event-normalizer';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../errors/api-error.ts';
import { tracingMiddleware } from '../log/tracing.ts';
import { instanceIdOf } from '../pki/instance-id.ts';
import type { Deps } from '../ports/deps.ts';
import type { OperationGroup } from '../routes/route.ts';
import { ROUTES } from '../routes/route-table.ts';
import { JSON_HEADERS } from './error-response.ts';
import { authentication } from './middleware/authentication.ts';
import type { ControllerContext } from './middleware/controller-context.ts';
import { errorEnvelope } from './middleware/error-envelope.ts';
import { lambdaContextLogging, metricsFlushing } from './middleware/powertools.ts';
import { requestBody } from './middleware/request-body.ts';
import { requestLogging } from './middleware/request-logging.ts';
import { indexRoutes, routeResolution } from './middleware/route-resolution.ts';
import type { OperationMap, OperationRequest } from './operation.ts';

export type GroupHandler = (event: APIGatewayProxyEvent, context: ControllerContext) => Promise<APIGatewayProxyResult>;

function multiValueQuery(event: APIGatewayProxyEvent): Record<string, string[]> {
  const query: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (values) query[name] = values;
  }
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined && !query[name]) query[name] = [value];
  }
  return query;
}

/** Where the caller reached us: the configured public URL, else the host (plus stage path on execute-api hosts). */
function baseUrlOf(event: APIGatewayProxyEvent, deps: Deps): string {
  if (deps.config.publicBaseUrl) return deps.config.publicBaseUrl.replace(/\/$/, '');
  const host = event.headers.host ?? event.requestContext.domainName ?? 'localhost';
  const stage = host.includes('.execute-api.') && event.requestContext.stage ? `/${event.requestContext.stage}` : '';
  return `https://${host}${stage}`;
}

/**
 * The Lambda handler of one operation group: Powertools (metrics, Lambda context on the log lines, X-Ray) →
 * normalise → log → route → body → authenticate → operation → envelope, with every error rendered as the API's error
 * envelope. The local server calls the same handler.
 */
export function createGroupHandler(group: OperationGroup, operations: OperationMap, deps: () => Deps): GroupHandler {
  const routes = ROUTES.filter((route) => route.group === group);
  for (const route of routes) {
    if (!operations[route.operation]) throw new Error(`group ${group} has no operation ${route.operation}`);
  }
  const index = indexRoutes(routes);

  const handle = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ControllerContext>({
    // The reference answers 503 TIMEOUT when a request runs past its handler timeout; middy answers just before
    // Lambda would kill the invocation, through the error envelope (which names the request's id).
    timeoutEarlyInMillis: 250,
    timeoutEarlyResponse: () => {
      throw new ApiError('TIMEOUT');
    },
  })
    // Powertools first, so that their closing hooks run last: the metrics flush sees the error envelope's count.
    .use(metricsFlushing(deps))
    .use(lambdaContextLogging(deps))
    .use(tracingMiddleware())
    .use(errorEnvelope(deps))
    .use(requestLogging(() => deps().logger))
    .use(httpEventNormalizer())
    .use(httpHeaderNormalizer())
    .use(routeResolution(index))
    .use(requestBody())
    .use(authentication(deps))
    .handler(async (event, context) => {
      const state = context.controller;
      const route = state.route!;
      const request: OperationRequest = {
        requestId: state.requestId,
        route,
        api: state.api!,
        pathParameters: (event.pathParameters ?? {}) as Record<string, string>,
        query: multiValueQuery(event),
        headers: event.headers as Record<string, string>,
        body: state.body,
        rawBody: state.rawBody,
        sourceIp: event.requestContext.identity?.sourceIp ?? '',
        clientCertPem: event.requestContext.identity?.clientCert?.clientCertPem,
        caller: state.caller,
        logger: state.logger,
        baseUrl: baseUrlOf(event, deps()),
      };
      const result = await operations[route.operation]!(request, deps());
      if (result.body instanceof Uint8Array) {
        // Bytes (an image) travel base64-encoded; API Gateway decodes them for its binary media types.
        return {
          statusCode: result.statusCode,
          headers: { ...JSON_HEADERS, ...result.headers },
          body: Buffer.from(result.body).toString('base64'),
          isBase64Encoded: true,
        };
      }
      return {
        statusCode: result.statusCode,
        headers: { ...JSON_HEADERS, ...result.headers },
        body: typeof result.body === 'string' ? result.body : JSON.stringify(result.body),
      };
    });

  const handled = handle as unknown as GroupHandler;
  return async (event, context) => withInstanceId(deps(), await handled(event, context));
}

/**
 * Every response, errors included, names the controller instance (`ziti-instance-id`), as the reference's do. A
 * table nobody bootstrapped has no network CA yet: then the header is left out rather than failing the request.
 */
async function withInstanceId(deps: Deps, response: APIGatewayProxyResult): Promise<APIGatewayProxyResult> {
  const instanceId = await instanceIdOf(deps).catch(() => undefined);
  return instanceId ? { ...response, headers: { ...response.headers, 'ziti-instance-id': instanceId } } : response;
}
