import type { AddressInfo } from 'node:net';
import { createServer, type TLSSocket } from 'node:tls';
import {
  CTRL_ALPN,
  type CtrlEndpoint,
  type CtrlEndpointOptions,
  createCtrlEndpoint,
} from '#ctrl-channel/ctrl-endpoint.ts';
import { localServerNames, serverTls } from '#local/server-tls.ts';
import type { TestController } from './test-controller.ts';

/** Another endpoint process of the same controller: the routers' endpoint as a task of its own on the same table. */
export interface SecondEndpoint {
  readonly endpoint: CtrlEndpoint;
  /** The port its TLS listener took (`dialCtrl(controller, credentials, { port })`). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts a second control channel endpoint beside the test controller's, as a second ECS task (`ctrl-channel/main.ts`)
 * runs: its own listener, its own endpoint id and memory, the controller's table, dependencies and server certificate.
 * What the two must agree on reaches each through the table alone.
 */
export async function startSecondEndpoint(
  controller: TestController,
  options: Omit<CtrlEndpointOptions, 'deps'> = {},
): Promise<SecondEndpoint> {
  const { deps } = controller;
  const { key, cert } = await serverTls(deps, localServerNames({}));
  const endpoint = createCtrlEndpoint({ deps, endpointId: 'second-endpoint', ...options });
  await endpoint.ready;
  const server = createServer({ key, cert, requestCert: true, rejectUnauthorized: false, ALPNProtocols: [CTRL_ALPN] });
  server.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol === CTRL_ALPN) endpoint.accept(socket);
    else socket.destroy();
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint,
    port: (server.address() as AddressInfo).port,
    close: async () => {
      endpoint.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
