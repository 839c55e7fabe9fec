import { STATUS_CODES } from 'node:http';
import type { ALBEvent, ALBResult, APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { ControllerConfig } from '../config.ts';
import { ApiError } from '../errors/api-error.ts';
import { canonicalPath, RouteMatcher } from '../routes/route-matcher.ts';
import { CORS_PREFLIGHT_HEADERS } from './cors.ts';
import { forwardedCertificateOf } from './forwarded-certificate.ts';
import { valuesByName } from './values-by-name.ts';

/** How the load balancer sent the event, and so how it takes the answer: the target group's multi-value setting. */
export function albResponseShape(event: ALBEvent): 'headers' | 'multiValueHeaders' {
  return event.multiValueHeaders ? 'multiValueHeaders' : 'headers';
}

/** A header or query map of either shape as name → every value ({@link valuesByName}), names as `name` makes them. */
function valuesOf(
  single: Readonly<Record<string, string | undefined>> | undefined,
  multi: Readonly<Record<string, readonly string[] | undefined>> | undefined,
  name: (raw: string) => string,
): Map<string, string[]> {
  const pairs = multi
    ? Object.entries(multi).flatMap(([raw, all]) => (all ?? []).map((value) => [name(raw), value] as const))
    : Object.entries(single ?? {}).flatMap(([raw, value]) =>
        value === undefined ? [] : [[name(raw), value] as const],
      );
  return valuesByName(pairs);
}

/** A query name or value as the client encoded it: the load balancer passes it on undecoded (`+` is a space). */
function decodedQueryPart(part: string): string {
  try {
    return decodeURIComponent(part.replaceAll('+', ' '));
  } catch {
    throw new ApiError('COULD_NOT_VALIDATE', {
      message: 'The query string is not validly URL-encoded.',
      cause: { message: `the query string part "${part.slice(0, 64)}" has an invalid percent-encoding` },
    });
  }
}

/**
 * The client's address: the last entry of `X-Forwarded-For`, the one the load balancer appended. Everything before it
 * is what the client sent in the header itself. (AWS: "If the X-Forwarded-For request header is not included in the
 * request, the load balancer creates one with the client IP address as the request value. Otherwise, the load
 * balancer appends the client IP address to the existing header", which holds with the listener's default
 * `routing.http.xff_header_processing.mode`, `append`.)
 */
function clientAddressOf(forwardedFor: readonly string[] | undefined): string {
  return (forwardedFor ?? []).join(',').split(',').at(-1)?.trim() ?? '';
}

/**
 * An ALB target event as the proxy event the middlewares read, with what API Gateway would have put in it: decoded
 * query parameters, the client's address, and the client certificate only as {@link forwardedCertificateOf} allows.
 * The resource stays to be found from the raw path (`route-resolution.ts`).
 */
export function proxyEventOfAlb(
  event: ALBEvent,
  config: Pick<ControllerConfig, 'frontDoor' | 'albClientCertHeader'>,
  requestId: string,
): APIGatewayProxyEvent {
  const headers = valuesOf(event.headers, event.multiValueHeaders, (raw) => raw.toLowerCase());
  // Only a multi-value event tells the load balancer's header from a copy a client sent beside it (two values,
  // refused); the stack always turns multi-value headers on, so a single-value event carries no certificate.
  const clientCertPem = forwardedCertificateOf(
    config,
    event.multiValueHeaders ? headers.get(config.albClientCertHeader) : undefined,
  );
  // Nothing past this point may take the header for a certificate.
  headers.delete(config.albClientCertHeader);
  const query = valuesOf(event.queryStringParameters, event.multiValueQueryStringParameters, decodedQueryPart);
  for (const [name, values] of query) query.set(name, values.map(decodedQueryPart));
  const host = headers.get('host')?.at(-1) ?? '';
  const sourceIp = clientAddressOf(headers.get('x-forwarded-for'));
  return {
    resource: '',
    path: event.path,
    httpMethod: event.httpMethod,
    headers: Object.fromEntries([...headers].map(([name, values]) => [name, values.join(',')])),
    multiValueHeaders: Object.fromEntries(headers),
    queryStringParameters: Object.fromEntries([...query].map(([name, values]) => [name, values.at(-1)!])),
    multiValueQueryStringParameters: Object.fromEntries(query),
    pathParameters: null,
    stageVariables: null,
    body: event.body,
    isBase64Encoded: event.isBase64Encoded,
    requestContext: {
      requestId,
      domainName: host.replace(/:[0-9]+$/, ''),
      identity: { sourceIp, clientCert: clientCertPem ? { clientCertPem } : null },
    },
  } as unknown as APIGatewayProxyEvent;
}

/**
 * An answer in the load balancer's shape: `statusDescription` ("the status code and reason phrase, separated by a
 * single space"), the headers as `headers` or `multiValueHeaders` as the request came, and `isBase64Encoded` always.
 */
export function albResultOf(result: APIGatewayProxyResult, shape: 'headers' | 'multiValueHeaders'): ALBResult {
  const headers = new Map<string, string[]>();
  for (const [name, value] of Object.entries(result.headers ?? {})) headers.set(name, [String(value)]);
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    headers.set(name, [...(headers.get(name) ?? []), ...values.map(String)]);
  }
  const reason = STATUS_CODES[result.statusCode];
  return {
    statusCode: result.statusCode,
    statusDescription: reason ? `${result.statusCode} ${reason}` : String(result.statusCode),
    ...(shape === 'multiValueHeaders'
      ? { multiValueHeaders: Object.fromEntries(headers) }
      : { headers: Object.fromEntries([...headers].map(([name, values]) => [name, values.at(-1)!])) }),
    body: result.body,
    isBase64Encoded: result.isBase64Encoded ?? false,
  };
}

/** Every route, for a preflight: built with the first one (a function's own bundle holds its group's routes only). */
let everyRoute: Promise<RouteMatcher> | undefined;

/**
 * The answer to a browser's preflight (`OPTIONS` with `Access-Control-Request-Method`) at a path some route serves:
 * behind API Gateway, mock integrations answer these; behind the load balancer, whichever function the listener sends
 * them to (its last rule sends every `OPTIONS` to one) answers, as the local server does. Undefined for anything else.
 * The path is matched against the whole route table, loaded with the first preflight: any group's path may be asked.
 */
export async function albPreflightAnswer(event: ALBEvent): Promise<APIGatewayProxyResult | undefined> {
  if (event.httpMethod !== 'OPTIONS') return undefined;
  const headers = valuesOf(event.headers, event.multiValueHeaders, (raw) => raw.toLowerCase());
  if (!headers.has('access-control-request-method')) return undefined;
  everyRoute ??= import('../routes/route-table.ts').then(({ ROUTES }) => new RouteMatcher(ROUTES));
  const matcher = await everyRoute;
  if (matcher.match('OPTIONS', canonicalPath(event.path)).kind === 'not-found') return undefined;
  return { statusCode: 204, headers: { ...CORS_PREFLIGHT_HEADERS }, body: '' };
}
