import type { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { valuesByName } from '#shared/http/values-by-name.ts';

export interface ProxyEventInput {
  readonly request: IncomingMessage;
  readonly url: URL;
  readonly resource: string;
  readonly pathParameters: Record<string, string>;
  readonly body: Buffer;
  readonly stage: string;
  /** API Gateway's id of the request (`requestContext.requestId`). */
  readonly requestId: string;
  /** The `host[:port]` the request is addressed to, from {@link serverAuthority}. */
  readonly authority: string;
}

/** How this server is reached: the port it listens on and the host names that lead to it. */
export interface ServerAddress {
  readonly port: number;
  /** Lower-case host names and addresses (IPv6 in brackets) that name this server. */
  readonly names: ReadonlySet<string>;
}

const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::([0-9]{1,5}))?$/;

/**
 * The authority a request is addressed to. API Gateway hands a function only requests whose `Host` is one of the
 * API's own domains, and the controller builds URLs from it (`/version`'s `apiBaseUrls`); here any client can send
 * any `Host`, so only one that names this server on its port is kept, and anything else becomes `localhost:port`.
 */
export function serverAuthority(host: string | undefined, server: ServerAddress): string {
  const parsed = HOST_HEADER.exec(host?.toLowerCase() ?? '');
  if (parsed && server.names.has(parsed[1]!) && Number(parsed[2] ?? 443) === server.port) return parsed[0];
  return `localhost:${server.port}`;
}

/** API Gateway's mTLS client-certificate block, built from the certificate the TLS handshake received. */
function clientCertOf(certificate: X509Certificate | undefined) {
  if (!certificate) return null;
  const dn = (text: string) => text.split('\n').reverse().join(',');
  return {
    clientCertPem: certificate.toString(),
    subjectDN: dn(certificate.subject),
    issuerDN: dn(certificate.issuer),
    serialNumber: certificate.serialNumber,
    validity: { notBefore: certificate.validFrom, notAfter: certificate.validTo },
  };
}

/** API Gateway's single- and multi-value maps of repeated names ({@link valuesByName}). */
function valueMaps(pairs: Iterable<[string, string]>, single: (values: readonly string[]) => string) {
  const values = valuesByName(pairs);
  return {
    single: Object.fromEntries([...values].map(([name, all]) => [name, single(all)])) as Record<string, string>,
    multi: Object.fromEntries(values) as Record<string, string[]>,
  };
}

/** A REST API (payload 1.0) proxy event, shaped exactly as API Gateway delivers it to a Lambda proxy integration. */
export function toProxyEvent(input: ProxyEventInput): APIGatewayProxyEvent {
  const { request, url } = input;
  const headerPairs: [string, string][] = [];
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!;
    if (name.toLowerCase() !== 'host') headerPairs.push([name, request.rawHeaders[i + 1]!]);
  }
  headerPairs.push(['Host', input.authority]);
  const { single: headers, multi: multiValueHeaders } = valueMaps(headerPairs, (values) => values.join(','));
  // API Gateway keeps the last value of a repeated query parameter in the single-value map.
  const { single: query, multi: multiQuery } = valueMaps(url.searchParams, (values) => values.at(-1)!);
  const socket = request.socket as TLSSocket;
  const certificate = typeof socket.getPeerX509Certificate === 'function' ? socket.getPeerX509Certificate() : undefined;
  const textual = input.body.length === 0 || isTextual(headers);
  const now = Date.now();
  return {
    resource: input.resource,
    path: url.pathname,
    httpMethod: request.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: Object.keys(query).length ? query : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters: Object.keys(input.pathParameters).length ? input.pathParameters : null,
    stageVariables: null,
    body: input.body.length === 0 ? null : textual ? input.body.toString('utf8') : input.body.toString('base64'),
    isBase64Encoded: !textual,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: input.authority.replace(/:[0-9]+$/, ''),
      authorizer: null,
      protocol: `HTTP/${request.httpVersion}`,
      httpMethod: request.method ?? 'GET',
      path: `/${input.stage}${url.pathname}`,
      stage: input.stage,
      requestId: input.requestId,
      requestTimeEpoch: now,
      resourceId: 'local',
      resourcePath: input.resource,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: clientCertOf(certificate),
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '',
        user: null,
        userAgent: request.headers['user-agent'] ?? null,
        userArn: null,
      },
    },
  };
}

function isTextual(headers: Record<string, string>): boolean {
  const contentType = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? '';
  return contentType === '' || /json|text|pem|x-www-form-urlencoded|jwt|yaml/i.test(contentType);
}
