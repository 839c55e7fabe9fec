import { X509Certificate } from 'node:crypto';
import { connect, type TLSSocket } from 'node:tls';
import { encodeMessage, FrameDecoder, ROUTER_FRAME_LIMITS } from '#ctrl-channel/frame-codec.ts';
import {
  boolHeader,
  type ChannelMessage,
  ContentType,
  Header,
  int32Header,
  type OutgoingMessage,
  uint64Header,
} from '#ctrl-channel/message.ts';
import { encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { fingerprintOf } from '#shared/pki/certificates.ts';
import type { RouterConnection } from '#shared/store/router-connections.ts';
import type { HttpResponse } from './https-client.ts';
import { csrFor } from './pki-fixtures.ts';
import type { TestController } from './test-controller.ts';

/** A client certificate (the chain the router presents) and its key, PEM. */
export interface Credentials {
  readonly cert: string;
  readonly key: string;
}

/**
 * An edge router policy letting every identity use every edge router: a router is sent the API sessions of the
 * identities its policies let use it, and none other.
 */
export async function everyIdentityUsesEveryRouter(
  call: (method: string, path: string, body?: unknown) => Promise<HttpResponse>,
  name = `every-identity-every-router-${Date.now().toString(36)}`,
): Promise<string> {
  const created = await call('POST', '/edge-router-policies', {
    name,
    semantic: 'AnyOf',
    identityRoles: ['#all'],
    edgeRouterRoles: ['#all'],
  });
  if (created.status !== 201) throw new Error(`edge router policy ${name}: ${created.status} ${created.text}`);
  return created.body.data.id as string;
}

/** The SHA-1 fingerprint of a router's enrolled certificate, as the controller stores and checks it. */
export function fingerprintOfCredentials(credentials: Credentials): string {
  return fingerprintOf(new X509Certificate(credentials.cert));
}

/**
 * An edge router created over the management API (with `fields` beside its name: `isTunnelerEnabled`) and enrolled
 * with `POST /enroll/erott`, as `ziti router` does.
 */
export function enrolledEdgeRouter(
  controller: () => TestController,
  call: (method: string, path: string, body?: unknown) => Promise<HttpResponse>,
  name: string,
  fields: Record<string, unknown> = {},
): Promise<{ id: string; credentials: Credentials }> {
  return enrolledRouter(controller, call, name, 'edge-routers', fields);
}

/**
 * An edge router enrolled, connected over the control channel (hello sent, heartbeats answered) and shown online by
 * the management API: where a test's scripted dials and binds go.
 */
export async function onlineEdgeRouter(
  controller: () => TestController,
  call: (method: string, path: string, body?: unknown) => Promise<HttpResponse>,
  name: string,
): Promise<{ id: string; end: RouterEnd }> {
  const enrolled = await enrolledEdgeRouter(controller, call, name);
  const end = await dialCtrl(controller(), enrolled.credentials, { answerHeartbeats: true });
  await end.hello(enrolled.id);
  for (let tries = 0; tries < 50; tries++) {
    if ((await call('GET', `/edge-routers/${enrolled.id}`)).body.data.isOnline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { id: enrolled.id, end };
}

/**
 * A router created over the management API (with `fields` beside its name) and enrolled as `ziti router enroll` does:
 * an edge router with `POST /enroll/erott`, a transit router (`POST /transit-routers`) with
 * `POST /enroll?method=trott`. `enroll` again (the router's id) re-enrolls it after `POST /edge-routers/{id}/re-enroll`.
 */
export async function enrolledRouter(
  controller: () => TestController,
  call: (method: string, path: string, body?: unknown) => Promise<HttpResponse>,
  name: string,
  collection: 'edge-routers' | 'transit-routers',
  fields: Record<string, unknown> = {},
): Promise<{ id: string; credentials: Credentials }> {
  const created = await call('POST', `/${collection}`, { name, ...fields });
  if (created.status !== 201) throw new Error(`router ${name}: ${created.status} ${created.text}`);
  const id = created.body.data.id as string;
  return { id, credentials: await enrollRouter(controller, call, id, collection) };
}

/** Enrolls a router by its outstanding enrollment token: its new client certificate and key. */
export async function enrollRouter(
  controller: () => TestController,
  call: (method: string, path: string, body?: unknown) => Promise<HttpResponse>,
  id: string,
  collection: 'edge-routers' | 'transit-routers',
): Promise<Credentials> {
  const token = (await call('GET', `/${collection}/${id}`)).body.data.enrollmentToken as string;
  const client = await csrFor('router');
  const server = await csrFor('router', [{ type: 'dns', value: 'router.example.com' }]);
  const enrolled =
    collection === 'edge-routers'
      ? await controller().call('POST', '/edge/client/v1/enroll/erott', {
          body: { token, clientCsr: client.csr, serverCsr: server.csr },
        })
      : await controller().call('POST', `/edge/client/v1/enroll?method=trott&token=${token}`, {
          body: { certCsr: client.csr, serverCertCsr: server.csr },
        });
  if (enrolled.status !== 200) throw new Error(`enrollment of ${id}: ${enrolled.status} ${enrolled.text}`);
  return { cert: enrolled.body.data.cert as string, key: client.key };
}

/**
 * A connection item as an endpoint writes it once a router's hello is accepted (its lease running a minute), for
 * tests that write the table as an endpoint would, without a channel.
 */
export function routerConnectionOf(routerId: string, connectionId = 'a-connection'): RouterConnection {
  return {
    routerId,
    endpointId: 'an-endpoint',
    connectionId,
    connectedAt: new Date().toISOString(),
    leaseExpiresAt: Date.now() + 60_000,
    version: 'v2.0.0-pre12',
    revision: 'r',
    buildDate: 'd',
    os: 'linux',
    arch: 'amd64',
  };
}

/** The reference router's hello headers (`router.GetChannelHeaders` and its control channel dialer). */
export function routerHelloHeaders(version = 'v2.0.0-pre12|a1b2c3|2026-01-01T00:00:00Z|linux|amd64') {
  return new Map<number, Buffer>([
    [Header.helloVersion, Buffer.from(version)],
    [Header.capabilities, Buffer.from([0x02])],
    [Header.isGrouped, boolHeader(true)],
    [Header.type, Buffer.from('ctrl.default')],
    [Header.isFirstGroupConnection, boolHeader(true)],
    [Header.connectionId, Buffer.from('router-group-1')],
  ]);
}

/** The host name and edge listener port the test routers' ClientHello reports by default. */
export const TEST_ROUTER_HOSTNAME = 'router.example.com';
export const TEST_ROUTER_EDGE_PORT = 3022;

/**
 * A ClientHello body (20001) as the reference router sends it: its version, host name, the pre-0.26.4 protocols and
 * ports, and its edge listeners (where each listens, and the address SDKs are told to dial); `fields` replace any.
 */
export function clientHelloBody(fields: Record<string, unknown> = {}): Buffer {
  const address = (value: string, hostname: string, port: number) => ({ value, protocol: 'tls', hostname, port });
  return encodeBody('edge.ClientHello', {
    version: 'v2.0.0-pre12',
    hostname: TEST_ROUTER_HOSTNAME,
    protocols: ['tls'],
    protocolPorts: [String(TEST_ROUTER_EDGE_PORT)],
    listeners: [
      {
        address: address(`tls:0.0.0.0:${TEST_ROUTER_EDGE_PORT}`, '0.0.0.0', TEST_ROUTER_EDGE_PORT),
        advertise: address(
          `${TEST_ROUTER_HOSTNAME}:${TEST_ROUTER_EDGE_PORT}`,
          TEST_ROUTER_HOSTNAME,
          TEST_ROUTER_EDGE_PORT,
        ),
      },
    ],
    ...fields,
  });
}

/** The ClientHello replying to the controller's ServerHello, with the reference router's headers (RDM, index 0). */
export function clientHelloReply(serverHello: ChannelMessage, body: Buffer = clientHelloBody()) {
  return {
    contentType: ContentType.clientHello,
    headers: new Map([
      [Header.replyFor, int32Header(serverHello.sequence)],
      [Header.routerDataModel, boolHeader(true)],
      [Header.routerDataModelIndex, uint64Header(0n)],
    ]),
    body,
  };
}

/** A Route (1005) the controller sends a router, as `decodeBody('ctrl.Route', body)` reads it. */
export interface Route {
  circuitId: string;
  attempt: number;
  egress: { binding: string; address: string; destination: string; peerData: Record<string, Buffer> };
  forwards: { srcAddress: string; dstAddress: string; dstType: string }[];
  timeout: number;
  tags: Record<string, string>;
}

/** The router's end of a control channel: it writes frames and reads the controller's, decoded. */
export interface RouterEnd {
  readonly socket: TLSSocket;
  /** Sends a message under the given sequence (the hello's is -1). */
  send(message: OutgoingMessage & { sequence: number }): void;
  /** The next message from the controller, or a rejection when none comes in `timeoutMs` or the connection ends. */
  next(timeoutMs?: number): Promise<ChannelMessage>;
  /** Every byte the controller sent, raw (for what is no channel message: the unknown-version reply). */
  readonly received: Buffer[];
  /** Resolves when the controller closes the connection. */
  readonly closed: Promise<void>;
  /** The controller's ServerHellos this router answered by itself (`answerServerHello`). */
  readonly serverHellos: ChannelMessage[];
  hello(id: string, headers?: ReadonlyMap<number, Buffer>): Promise<ChannelMessage>;
}

/**
 * Dials the controller's address with ALPN `ziti-ctrl`, as a router dials its control channel. As a live router, it
 * answers the controller's ServerHello with its ClientHello (`clientHello`, by default `clientHelloBody()`) unless
 * `answerServerHello` is false: the ServerHello is then one of the messages `next` returns.
 */
export async function dialCtrl(
  controller: TestController,
  credentials: Credentials | undefined,
  options: {
    port?: number;
    alpn?: string[];
    answerHeartbeats?: boolean;
    answerServerHello?: boolean;
    clientHello?: Buffer;
  } = {},
): Promise<RouterEnd> {
  const socket = connect({
    host: '127.0.0.1',
    port: options.port ?? controller.server.port,
    servername: 'localhost',
    ca: controller.rootCertPem,
    ALPNProtocols: options.alpn ?? ['ziti-ctrl'],
    ...(credentials ?? {}),
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  const decoder = new FrameDecoder(ROUTER_FRAME_LIMITS);
  const queue: ChannelMessage[] = [];
  const received: Buffer[] = [];
  const serverHellos: ChannelMessage[] = [];
  let sequence = 1_000;
  let wake: (() => void) | undefined;
  let ended = false;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    received.push(chunk);
    try {
      for (const message of decoder.push(chunk)) {
        const beat = message.headers.get(Header.heartbeat);
        // A live router answers the controller's heartbeats (and the tests then never see them).
        if (options.answerHeartbeats && beat) {
          send({
            contentType: ContentType.heartbeat,
            sequence: 0,
            headers: new Map([[Header.heartbeatResponse, beat]]),
          });
        } else if (message.contentType === ContentType.serverHello && options.answerServerHello !== false) {
          serverHellos.push(message);
          send({ ...clientHelloReply(message, options.clientHello), sequence: sequence++ });
        } else queue.push(message);
      }
    } catch {
      // Not a channel message (the unknown-version reply): kept raw in `received`.
    }
    wake?.();
  });
  void closed.then(() => {
    ended = true;
    wake?.();
  });
  const next = async (timeoutMs = 5_000): Promise<ChannelMessage> => {
    const deadline = Date.now() + timeoutMs;
    while (queue.length === 0) {
      if (ended) throw new Error('the controller closed the connection');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no message from the controller within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, left);
      });
    }
    return queue.shift()!;
  };
  const send: RouterEnd['send'] = (message) =>
    socket.write(
      encodeMessage({
        contentType: message.contentType,
        sequence: message.sequence,
        headers: message.headers ?? new Map(),
        body: message.body ?? Buffer.alloc(0),
      }),
    );
  return {
    socket,
    send,
    next,
    received,
    closed,
    serverHellos,
    hello: async (id, headers = routerHelloHeaders()) => {
      send({ contentType: ContentType.hello, sequence: -1, headers, body: Buffer.from(id) });
      return next();
    },
  };
}
