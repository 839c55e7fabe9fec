import {
  boolHeader,
  type ChannelMessage,
  ContentType,
  Header,
  int32Header,
  uint32Header,
} from '#ctrl-channel/message.ts';
import { decodeBody, encodeBody } from '#ctrl-channel/protobuf-codec.ts';
import { type Credentials, dialCtrl, type Route } from './ctrl-router.ts';
import { ReplayedRouter } from './replayed-router.ts';
import type { TestController } from './test-controller.ts';

/**
 * A scripted router of a mesh, as the reference router speaks for its links and routes: it reports the links it
 * dialed and answers Routes; what the controller sent it is read by type (`ReplayedRouter`).
 */
export class MeshRouter extends ReplayedRouter {
  /** Sends a message of this type, under the router's next sequence. */
  sendBody(contentType: number, body: Buffer, headers = new Map<number, Buffer>()): number {
    return this.send({ contentType, body, headers });
  }

  /** Reports a link it dialed to another router (RouterLinks, as the reference sends on connect and on each new link). */
  reportLink(id: string, to: string): void {
    this.sendBody(
      ContentType.routerLinks,
      encodeBody('ctrl.RouterLinks', {
        links: [
          {
            id,
            destRouterId: to,
            linkProtocol: 'tls',
            dialAddress: `tls:${to}.links.test:13102`,
            iteration: 1,
            connState: { stateIteration: 1, conns: [] },
          },
        ],
      }),
    );
  }

  /** Answers a Route: set up, or failed with a reason; `headers` adds to the result (the host's public key). */
  answerRoute(route: ChannelMessage, success = true, headers: [number, Buffer][] = []): void {
    const { circuitId, attempt } = decodeBody<Route>('ctrl.Route', route.body);
    this.sendBody(
      ContentType.routeResult,
      Buffer.from(circuitId),
      new Map([
        [Header.replyFor, int32Header(route.sequence)],
        [1101, uint32Header(attempt)],
        ...(success ? ([[1102, boolHeader(true)]] as [number, Buffer][]) : [[1103, Buffer.from('no way on')]]),
        ...headers,
      ] as [number, Buffer][]),
    );
  }
}

/** An enrolled router connected over the control channel (to the test controller's endpoint, or another's port). */
export async function connectedMeshRouter(
  controller: TestController,
  router: { readonly id: string; readonly credentials: Credentials },
  port?: number,
): Promise<MeshRouter> {
  const end = await dialCtrl(controller, router.credentials, { answerHeartbeats: true, ...(port ? { port } : {}) });
  await end.hello(router.id);
  return new MeshRouter(router.id, end);
}

/** Reads until `check` holds of what was read, or the time is up; what was read last. */
export async function until<T>(
  read: () => Promise<T> | T,
  check: (value: T) => boolean,
  timeoutMs = 8_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
