import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import type { ALBEvent } from 'aws-lambda';

export interface AlbEventInput {
  readonly request: IncomingMessage;
  readonly url: URL;
  readonly body: Buffer;
  /** The `host[:port]` the request is addressed to (`serverAuthority`). */
  readonly authority: string;
  /** The name the load balancer forwards the certificate chain under (`ALB_CLIENT_CERT_HEADER`). */
  readonly certificateHeader: string;
}

// Bodies the load balancer passes as they are; any other type arrives base64-encoded (AWS, "Lambda functions as
// targets": "text/*, application/json, application/javascript, and application/xml").
const TEXTUAL = /^\s*(text\/|application\/(json|javascript|xml)\b)/i;

/**
 * The chain of the handshake's certificate, leaf first, each certificate once: what the client presented, as Node
 * reports it (it may complete the chain with issuers it knows; the controller reads only the leaf).
 */
function presentedChain(socket: TLSSocket): Buffer[] {
  if (typeof socket.getPeerCertificate !== 'function') return [];
  const chain: Buffer[] = [];
  let certificate: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (certificate?.raw && !chain.some((known) => known.equals(certificate!.raw))) {
    chain.push(certificate.raw);
    certificate = certificate.issuerCertificate;
  }
  return chain;
}

/** PEM, URL-encoded "with +=/ as safe characters", as the load balancer writes `X-Amzn-Mtls-Clientcert`. */
function urlEncodedPem(chain: readonly Buffer[]): string {
  const pem = chain
    .map((der) => {
      const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
      return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
    })
    .join('');
  return encodeURIComponent(pem).replaceAll('%2B', '+').replaceAll('%3D', '=').replaceAll('%2F', '/');
}

/** The query as the load balancer passes it: names and values as the client encoded them, every value of a name. */
function rawQuery(search: string): Record<string, string[]> {
  const query = new Map<string, string[]>();
  for (const pair of search.replace(/^\?/, '').split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    const name = at < 0 ? pair : pair.slice(0, at);
    const value = at < 0 ? '' : pair.slice(at + 1);
    query.set(name, [...(query.get(name) ?? []), value]);
  }
  return Object.fromEntries(query);
}

/**
 * The event an Application Load Balancer sends a Lambda target for this request, with multi-value headers on (what
 * the stack sets), in mutual TLS passthrough mode: the chain the client presented in the handshake, if any, in the
 * certificate header, and any `X-Amzn-Mtls-*` header or header of the certificate header's name that the client sent
 * itself removed, so that only this server's handshake speaks through it; the client's address appended to
 * `X-Forwarded-For`.
 */
export function toAlbEvent(input: AlbEventInput): ALBEvent {
  const { request, url } = input;
  const headers = new Map<string, string[]>();
  const add = (name: string, value: string) => headers.set(name, [...(headers.get(name) ?? []), value]);
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!.toLowerCase();
    const forged = name.startsWith('x-amzn-mtls-') || name === input.certificateHeader;
    if (!forged && name !== 'host' && !name.startsWith('x-forwarded-')) add(name, request.rawHeaders[i + 1]!);
  }
  add('host', input.authority);
  const socket = request.socket as TLSSocket;
  const clientAddress = socket.remoteAddress?.replace(/^::ffff:/, '') ?? '';
  const forwardedFor = request.headers['x-forwarded-for'];
  const sentFor = Array.isArray(forwardedFor) ? forwardedFor.join(', ') : forwardedFor;
  add('x-forwarded-for', sentFor ? `${sentFor}, ${clientAddress}` : clientAddress);
  add('x-forwarded-proto', 'https');
  add('x-forwarded-port', String(socket.localPort ?? 443));
  add('x-amzn-trace-id', `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`);
  const chain = presentedChain(socket);
  if (chain.length > 0) add(input.certificateHeader, urlEncodedPem(chain));
  const textual = TEXTUAL.test(request.headers['content-type'] ?? '');
  return {
    requestContext: { elb: { targetGroupArn: 'arn:aws:elasticloadbalancing:local:000000000000:targetgroup/local/0' } },
    httpMethod: request.method ?? 'GET',
    path: url.pathname,
    multiValueQueryStringParameters: rawQuery(url.search),
    multiValueHeaders: Object.fromEntries(headers),
    body: textual || input.body.length === 0 ? input.body.toString('utf8') : input.body.toString('base64'),
    isBase64Encoded: !textual && input.body.length > 0,
  };
}
