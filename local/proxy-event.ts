import { randomUUID, type X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { APIGatewayProxyEvent } from 'aws-lambda';

export interface ProxyEventInput {
  readonly request: IncomingMessage;
  readonly url: URL;
  readonly resource: string;
  readonly pathParameters: Record<string, string>;
  readonly body: Buffer;
  readonly stage: string;
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

/** A REST API (payload 1.0) proxy event, shaped exactly as API Gateway delivers it to a Lambda proxy integration. */
export function toProxyEvent(input: ProxyEventInput): APIGatewayProxyEvent {
  const { request, url } = input;
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!;
    const value = request.rawHeaders[i + 1]!;
    headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = value; // API Gateway keeps the last value in the single-value map.
    multiQuery[name] = [...(multiQuery[name] ?? []), value];
  }
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
      authorizer: null,
      protocol: `HTTP/${request.httpVersion}`,
      httpMethod: request.method ?? 'GET',
      path: `/${input.stage}${url.pathname}`,
      stage: input.stage,
      requestId: randomUUID(),
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
