import type { CtrlEndpointOptions } from '#ctrl-channel/ctrl-endpoint.ts';
import { type ExtraEndpoint, startExtraEndpoint } from '#local/extra-endpoint.ts';
import { localServerNames, serverTls } from '#local/server-tls.ts';
import type { TestController } from './test-controller.ts';

/** Another endpoint process of the same controller: the routers' endpoint as a task of its own on the same table. */
export type SecondEndpoint = ExtraEndpoint;

/**
 * Starts a second control channel endpoint beside the test controller's, as a second ECS task runs: its own listener
 * (`dialCtrl(controller, credentials, { port })`), its own endpoint id and memory, the controller's table, dependencies
 * and server certificate (`local/extra-endpoint.ts`, as `npm start` runs one).
 */
export async function startSecondEndpoint(
  controller: TestController,
  options: Omit<CtrlEndpointOptions, 'deps'> = {},
): Promise<SecondEndpoint> {
  const { deps } = controller;
  const { key, cert } = await serverTls(deps, localServerNames({}));
  return startExtraEndpoint(
    { deps, endpointId: 'second-endpoint', ...options, tls: { key, cert } },
    { port: 0, host: '127.0.0.1' },
  );
}
