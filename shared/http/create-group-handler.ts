import middy from '@middy/core';
import httpEventNormalizer from '@middy/http-event-normalizer';
import type { ALBEvent, ALBResult, APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../errors/api-error.ts';
import { tracingMiddleware } from '../log/tracing.ts';
import { instanceIdOf } from '../pki/instance-id.ts';
import type { Deps } from '../ports/deps.ts';
import type { OperationGroup, Route } from '../routes/route.ts';
import { RouteMatcher } from '../routes/route-matcher.ts';
import { errorResponse, JSON_HEADERS } from './error-response.ts';
import { albEventModule, isAlbEvent } from './is-alb-event.ts';
import { albEvents } from './middleware/alb-events.ts';
import { authentication } from './middleware/authentication.ts';
import type { ControllerContext } from './middleware/controller-context.ts';
import { errorEnvelope } from './middleware/error-envelope.ts';
import { lowercaseHeaders } from './middleware/lowercase-headers.ts';
import { lambdaContextLogging, metricsFlushing } from './middleware/powertools.ts';
import { requestBody } from './middleware/request-body.ts';
import { requestLogging } from './middleware/request-logging.ts';
import { routeResolution } from './middleware/route-resolution.ts';
import type { OperationMap, OperationRequest } from './operation.ts';
import { bodyTextWithin, fitsWithin, responseBound } from './response-size.ts';

/** A group's Lambda handler: API Gateway's proxy events and a load balancer's target events, each answered in kind. */
export interface GroupHandler {
  (event: APIGatewayProxyEvent, context: ControllerContext): Promise<APIGatewayProxyResult>;
  (event: ALBEvent, context: ControllerContext): Promise<ALBResult>;
}

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
 * envelope. `routes` holds the group's routes (the local server passes the whole table, each handler its part of it).
 * The local server calls the same handler.
 */
export function createGroupHandler(
  group: OperationGroup,
  routes: readonly Route[],
  operations: OperationMap,
  deps: () => Deps,
): GroupHandler {
  const own = routes.filter((route) => route.group === group);
  for (const route of own) {
    if (!operations[route.operation]) throw new Error(`group ${group} has no operation ${route.operation}`);
  }
  // The group's own routes: a function's bundle then holds its part of the route table only. No template of one group
  // is shadowed by another group's literal (test/unit/group-routes.test.ts), so a raw path finds the same route here
  // as in the whole table; a path of another group is not found.
  const matcher = new RouteMatcher(own);

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
    .use(requestLogging(deps))
    .use(albEvents(deps))
    .use(httpEventNormalizer())
    .use(lowercaseHeaders())
    .use(routeResolution(group, matcher))
    .use(requestBody())
    .use(authentication(deps, operations))
    .handler(async (event, context) => {
      const state = context.controller;
      const route = state.route!;
      const request: OperationRequest = {
        requestId: state.requestId,
        route,
        api: state.api!,
        pathParameters: state.pathParameters ?? {},
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
      if (result.routine) state.routine = true;
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
        body:
          typeof result.body === 'string'
            ? result.body
            : bodyTextWithin(result.body, responseBound(state.albResponse !== undefined)),
      };
    });

  const handled = handle as unknown as (
    event: APIGatewayProxyEvent | ALBEvent,
    context: ControllerContext,
  ) => Promise<APIGatewayProxyResult>;
  const handler = async (event: APIGatewayProxyEvent | ALBEvent, context: ControllerContext) => {
    // Read before middy runs: the chain replaces a load balancer's event with the proxy event it reads.
    const fromAlb = isAlbEvent(event);
    let inKind = (result: APIGatewayProxyResult): APIGatewayProxyResult | ALBResult => result;
    if (fromAlb) {
      const { albPreflightAnswer, albResponseShape, albResultOf } = await albEventModule();
      const shape = albResponseShape(event);
      const preflight = await albPreflightAnswer(event);
      if (preflight) return albResultOf(await withInstanceId(deps(), preflight), shape);
      inKind = (result) => albResultOf(result, shape);
    }
    const answer = inKind(await withInstanceId(deps(), await handled(event, context)));
    const bound = responseBound(fromAlb);
    if (fitsWithin(answer, bound)) return answer;
    // Whatever grew past the bound unsized (a text body, a header), the front door gets an error it can carry.
    const refused = new ApiError('RESPONSE_TOO_LARGE', {
      cause: { message: `the answer is larger than ${bound} bytes` },
    });
    const requestId = context.controller?.requestId ?? context.awsRequestId;
    return inKind(await withInstanceId(deps(), errorResponse(refused, requestId)));
  };
  return handler as GroupHandler;
}

/**
 * Every response, errors included, names the controller instance (`ziti-instance-id`), as the reference's do. A
 * table nobody bootstrapped has no network CA yet: then the header is left out rather than failing the request.
 */
async function withInstanceId<R extends { headers?: APIGatewayProxyResult['headers'] }>(
  deps: Deps,
  response: R,
): Promise<R> {
  const instanceId = await instanceIdOf(deps).catch(() => undefined);
  return instanceId ? { ...response, headers: { ...response.headers, 'ziti-instance-id': instanceId } } : response;
}
