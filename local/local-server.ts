import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:https';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { ALBResult, APIGatewayProxyResult } from 'aws-lambda';
import { CTRL_ALPN, type CtrlEndpoint } from '#ctrl-channel/ctrl-endpoint.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { CORS_PREFLIGHT_HEADERS } from '#shared/http/cors.ts';
import { createGroupHandler, type GroupHandler } from '#shared/http/create-group-handler.ts';
import { errorResponse } from '#shared/http/error-response.ts';
import type { ControllerContext } from '#shared/http/middleware/controller-context.ts';
import { MAX_BODY_BYTES } from '#shared/http/middleware/request-body.ts';
import { instanceIdOf } from '#shared/pki/instance-id.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { OperationGroup } from '#shared/routes/route.ts';
import { canonicalPath, RouteMatcher } from '#shared/routes/route-matcher.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { toAlbEvent } from './alb-event.ts';
import { GROUP_OPERATIONS } from './group-operations.ts';
import { serverAuthority, toProxyEvent } from './proxy-event.ts';
import type { TlsMaterial } from './tls-certificate.ts';

export interface LocalServerOptions {
  readonly deps: Deps;
  readonly tls: TlsMaterial;
  readonly port: number;
  readonly host?: string;
  /**
   * How the listener treats client certificates: `optional` (the default: asked for, never required, one listener
   * for everything), or the two listeners of AWS's shape: `none` (the plain domain, which never asks) and `required`
   * (the mTLS domain: a certificate chaining to {@link LocalServerOptions.trustedCaPem} or no connection).
   */
  readonly clientCertificates?: 'optional' | 'none' | 'required';
  /** With `required`: the CA bundle the listener trusts (the truststore), replaced later with `trust`. */
  readonly trustedCaPem?: string;
  /**
   * Runs each invocation of a group's handler (by default, just runs it): the tests run it as the group's Lambda
   * function, to hold what it sends to the table to that function's IAM grant.
   */
  readonly invokeAs?: <T>(group: OperationGroup, invoke: () => Promise<T>) => Promise<T>;
  /**
   * The routers' control channel on the same address, as the reference serves it: a TLS connection that asks for
   * ALPN `ziti-ctrl` goes to this endpoint, every other to HTTP. Without it, `ziti-ctrl` is refused in the handshake.
   */
  readonly ctrlEndpoint?: CtrlEndpoint;
}

export interface LocalServer {
  readonly server: Server;
  readonly port: number;
  readonly origin: string;
  /** Replaces the CA bundle a `required` listener trusts (a CA verified or deleted): the local truststore. */
  trust(bundlePem: string): void;
  close(): Promise<void>;
}

// Lambda's timeout for every function (the reference answers 503 TIMEOUT after 10 s).
const FUNCTION_TIMEOUT_MS = 10_000;

// Names that reach this machine whatever address the server listens on.
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARD_ADDRESSES = new Set(['0.0.0.0', '::', '[::]']);

/** An address as it appears in a `Host` header: IPv4-mapped IPv6 unwrapped, IPv6 in brackets. */
function hostForm(address: string): string {
  const unmapped = address.replace(/^::ffff:(?=\d+\.)/i, '').toLowerCase();
  return unmapped.includes(':') && !unmapped.startsWith('[') ? `[${unmapped}]` : unmapped;
}

/** The names that reach a server listening on `listenHost`: the loopback names, and that host unless a wildcard. */
function listenNames(listenHost: string): ReadonlySet<string> {
  const configured = hostForm(listenHost);
  return new Set(WILDCARD_ADDRESSES.has(configured) ? LOOPBACK_NAMES : [...LOOPBACK_NAMES, configured]);
}

/**
 * The names a request may address this server by: those of its listening host, and the address the connection
 * arrived at (which a client on the network necessarily used).
 */
function namesOf(listening: ReadonlySet<string>, request: IncomingMessage): ReadonlySet<string> {
  const local = request.socket.localAddress && hostForm(request.socket.localAddress);
  return local && !listening.has(local) ? new Set([...listening, local]) : listening;
}

/** The request target as a URL, or a 400: Node accepts absolute-form targets that the URL parser refuses. */
function requestUrl(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'https://localhost');
  } catch {
    throw new ApiError('COULD_NOT_VALIDATE', {
      message: 'The request target is not a valid URL.',
      cause: { message: 'the request target cannot be parsed as a path or an absolute URL' },
    });
  }
}

function lambdaContext(group: OperationGroup): ControllerContext {
  const deadline = Date.now() + FUNCTION_TIMEOUT_MS;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `local-${group}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:local-${group}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/local/${group}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  } as unknown as ControllerContext;
}

/**
 * Reads a request body up to the limit. Past it, the rest is drained without being kept, so the client can finish
 * sending and read the 413 (chunked bodies have no declared length to refuse up front).
 */
function readBody(request: IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else chunks.length = 0;
    });
    request.on('end', () => resolve(size > MAX_BODY_BYTES ? 'too-large' : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

// The first byte of every TLS connection: a handshake record. A plain HTTP request starts with a method's letter.
const TLS_HANDSHAKE = 0x16;
// A connection that has sent nothing yet is dropped after as long as Node's TLS server waits for a handshake.
const FIRST_BYTE_TIMEOUT_MS = 120_000;

/** The answer to a plain-HTTP request on this HTTPS port: a 400 in the API's error envelope naming the right URL. */
function plainHttpRefusal(origin: string): Buffer {
  const result = errorResponse(
    new ApiError('COULD_NOT_VALIDATE', {
      message: `This port speaks HTTPS only: use ${origin}/ (https://, not http://).`,
      cause: { message: `a plain HTTP request reached the HTTPS listener at ${origin}` },
    }),
    randomUUID(),
  );
  const body = Buffer.from(result.body);
  const head = [
    `HTTP/1.1 ${result.statusCode} Bad Request`,
    ...Object.entries({ ...result.headers, 'content-length': body.length, connection: 'close' }).map(
      ([name, value]) => `${name}: ${value}`,
    ),
  ];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), body]);
}

/**
 * A request Node's parser refused (headers over its 16 KiB, malformed syntax) is answered 431 or 400 and the
 * connection closed, as API Gateway refuses one. Node does that by itself only on a socket that has written nothing,
 * and a TLS socket handed over by {@link tlsOrRefusal} has already written its handshake: without this, the client
 * saw the connection drop. A response under way on the socket (keep-alive) is never interrupted by a second.
 */
function answerUnparsable(error: Error & { code?: string }, socket: Duplex): void {
  const busy = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (!socket.writable || busy) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
  socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
}

/**
 * Hands each connection to `tlsServer` once its first byte shows a TLS handshake; a plain HTTP request (someone typed
 * http://) gets a readable 400 instead of a connection closed without a word.
 */
function tlsOrRefusal(tlsServer: Server, origin: () => string) {
  return (socket: Socket) => {
    socket.on('error', () => socket.destroy());
    socket.setTimeout(FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
    socket.once('readable', () => {
      const first: Buffer | null = socket.read(1);
      if (first === null) return;
      socket.setTimeout(0);
      socket.unshift(first);
      if (first[0] === TLS_HANDSHAKE) {
        tlsServer.emit('connection', socket);
        return;
      }
      socket.end(plainHttpRefusal(origin()));
      socket.resume();
    });
  };
}

const HTTP_1_1 = 'http/1.1';

/**
 * The application protocol of a TLS connection, told apart by ALPN as the reference tells its control channel from
 * its APIs on one listener: HTTP/1.1 when offered (as before: the only protocol this server speaks HTTP in), else
 * `ziti-ctrl` when a control channel endpoint is served; anything else offered alone fails the handshake with
 * `no_application_protocol`, as it always did. A client that offers no ALPN speaks HTTP.
 */
function selectProtocol(ctrlServed: boolean) {
  return ({ protocols }: { protocols: string[] }): string | undefined => {
    if (protocols.includes(HTTP_1_1)) return HTTP_1_1;
    if (ctrlServed && protocols.includes(CTRL_ALPN)) return CTRL_ALPN;
    return undefined;
  };
}

/**
 * Sends connections that negotiated `ziti-ctrl` to the control channel endpoint and every other one to the HTTPS
 * server's own HTTP handling (its one `secureConnection` listener).
 */
function routeByProtocol(server: Server, ctrlEndpoint: CtrlEndpoint): void {
  const httpConnection = server.listeners('secureConnection')[0] as (socket: TLSSocket) => void;
  server.removeAllListeners('secureConnection');
  server.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol === CTRL_ALPN) ctrlEndpoint.accept(socket);
    else httpConnection.call(server, socket);
  });
}

/**
 * The controller on this machine: an HTTPS server that matches requests against the route table, builds the proxy
 * event API Gateway would (or, with `FRONT_DOOR=alb`, the target event the load balancer would), and invokes the same
 * group handler the Lambda runs. By default it asks for a client certificate without requiring one, as certificate
 * login and enrollment need it only on some routes: the load balancer's shape, one listener for everything; two
 * listeners (`none` and `required`) reproduce API Gateway's plain and mTLS domains.
 */
export async function startLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const matcher = new RouteMatcher(ROUTES);
  const listenHost = options.host ?? '127.0.0.1';
  const listening = listenNames(listenHost);
  const handlers = new Map<OperationGroup, GroupHandler>();
  for (const [group, operations] of Object.entries(GROUP_OPERATIONS) as [
    OperationGroup,
    (typeof GROUP_OPERATIONS)[OperationGroup],
  ][]) {
    handlers.set(
      group,
      createGroupHandler(group, ROUTES, operations, () => options.deps),
    );
  }

  const invokeAs = options.invokeAs ?? ((_group, invoke) => invoke());
  const mode = options.clientCertificates ?? 'optional';
  const secureContext = (trustedCaPem: string | undefined) => ({
    key: options.tls.key,
    cert: options.tls.cert,
    ...(mode === 'required' && trustedCaPem ? { ca: trustedCaPem } : {}),
  });
  const server = createServer(
    {
      ...secureContext(options.trustedCaPem),
      requestCert: mode !== 'none',
      rejectUnauthorized: mode === 'required',
      ALPNCallback: selectProtocol(options.ctrlEndpoint !== undefined),
    },
    async (request, response) => {
      // API Gateway gives every request an id, its own errors included: the error body's `requestId` and the
      // function's log lines carry it (the handler reads it from the event).
      const requestId = randomUUID();
      const send = async (result: APIGatewayProxyResult | ALBResult) => {
        const headers: Record<string, unknown> = { ...result.headers, ...result.multiValueHeaders };
        // The handlers name the instance; so do the answers this server gives itself (unknown paths, bad targets).
        const instanceId = headers['ziti-instance-id'] ?? (await instanceIdOf(options.deps).catch(() => undefined));
        if (response.headersSent) return;
        response.writeHead(result.statusCode, {
          ...(headers as Record<string, string | string[]>),
          ...(instanceId ? { 'ziti-instance-id': String(instanceId) } : {}),
          server: 'ziti-controller-serverless',
        });
        const body = result.body ?? '';
        response.end(result.isBase64Encoded ? Buffer.from(body, 'base64') : body);
      };
      try {
        if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
          // A browser's preflight: API Gateway answers these itself (CORS options on every resource it has), so a
          // target that is no URL is refused like any request, and a path no route serves is not found.
          const target = requestUrl(request.url);
          if (matcher.match('OPTIONS', canonicalPath(target.pathname)).kind === 'not-found') {
            throw new ApiError('NOT_FOUND');
          }
          response.writeHead(204, { ...CORS_PREFLIGHT_HEADERS, server: 'ziti-controller-serverless' });
          response.end();
          request.resume();
          return;
        }
        const declared = Number(request.headers['content-length'] ?? 0);
        if (declared > MAX_BODY_BYTES) {
          await send(errorResponse(new ApiError('REQUEST_ENTITY_TOO_LARGE'), requestId));
          request.resume();
          return;
        }
        const body = await readBody(request);
        if (body === 'too-large') {
          await send(errorResponse(new ApiError('REQUEST_ENTITY_TOO_LARGE'), requestId));
          return;
        }
        const url = requestUrl(request.url);
        const authority = serverAuthority(request.headers.host, {
          port: request.socket.localPort ?? 443,
          names: namesOf(listening, request),
        });
        const match = matcher.match(request.method ?? 'GET', canonicalPath(url.pathname));
        if (match.kind !== 'found') {
          const code = match.kind === 'method-not-allowed' ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND';
          await send(errorResponse(new ApiError(code), requestId));
          return;
        }
        const handler = handlers.get(match.route.group)!;
        const context = lambdaContext(match.route.group);
        if (options.deps.config.frontDoor === 'alb') {
          // The load balancer's listener: its target event, whose path the handler matches itself.
          const certificateHeader = options.deps.config.albClientCertHeader;
          const event = toAlbEvent({ request, url, body, authority, certificateHeader });
          await send(await invokeAs(match.route.group, () => handler(event, context)));
          return;
        }
        const event = toProxyEvent({
          request,
          url,
          resource: match.resource,
          pathParameters: match.pathParameters,
          body,
          stage: 'local',
          requestId,
          authority,
        });
        await send(await invokeAs(match.route.group, () => handler(event, context)));
      } catch (error) {
        if (error instanceof ApiError) {
          await send(errorResponse(error, requestId));
          return;
        }
        options.deps.logger.error('local server fault', { requestId, detail: (error as Error).message });
        send(errorResponse(new ApiError('UNHANDLED'), requestId));
      }
    },
  );

  if (options.ctrlEndpoint) routeByProtocol(server, options.ctrlEndpoint);
  // The port is the front's: it reads each connection's first byte before the HTTPS server sees it.
  server.on('clientError', answerUnparsable);
  const front = createNetServer(tlsOrRefusal(server, () => `https://localhost:${port}`));
  const connections = new Set<Socket>();
  front.on('connection', (socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(options.port, listenHost, () => resolve());
  });
  const { port } = front.address() as AddressInfo;
  return {
    server,
    port,
    origin: `https://localhost:${port}`,
    trust: (bundlePem) => server.setSecureContext(secureContext(bundlePem)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        front.close(() => resolve());
        for (const socket of connections) socket.destroy();
      }),
  };
}
