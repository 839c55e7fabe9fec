import type { AddressInfo } from 'node:net';
import { type CtrlEndpoint, type CtrlEndpointOptions, createCtrlEndpoint } from '#ctrl-channel/ctrl-endpoint.ts';
import { routersListener } from '#ctrl-channel/routers-listener.ts';

/** Another endpoint process of the same controller, in this process: its listener and its endpoint. */
export interface ExtraEndpoint {
  readonly endpoint: CtrlEndpoint;
  /** The port its listener took (the one asked for, or any free one for 0). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A control channel endpoint as a second ECS task runs it (`ctrl-channel/main.ts`), beside the first in this process:
 * its own TLS listener (ALPN `ziti-ctrl`, the router's certificate asked for and checked by the endpoint), its own
 * endpoint id and memory, the same table and server certificate. What the endpoints must agree on reaches each through
 * the table alone, and a circuit across routers on both goes through their relays (`ctrl-channel/endpoint-relay.ts`).
 * `npm start` runs one with `CONTROLLER_EXTRA_CTRL_PORT`, to try routers on several tasks on one machine; the tests
 * run one as a second task.
 */
export async function startExtraEndpoint(
  options: CtrlEndpointOptions & { readonly tls: { readonly key: string; readonly cert: string } },
  listen: { readonly port: number; readonly host: string },
): Promise<ExtraEndpoint> {
  const endpoint = createCtrlEndpoint(options);
  await endpoint.ready;
  const server = routersListener(endpoint, options.tls);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, resolve);
  });
  return {
    endpoint,
    port: (server.address() as AddressInfo).port,
    close: async () => {
      endpoint.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
