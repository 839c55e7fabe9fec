import { ensureServerCertificate } from '#shared/pki/server-certificate.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { createCtrlEndpoint } from './ctrl-endpoint.ts';
import { DEFAULT_CTRL_PORT, DEFAULT_CTRL_RELAY_PORT } from './ctrl-port.ts';
import { createEndpointDeps } from './endpoint-deps.ts';
import { routersListener } from './routers-listener.ts';
import { taskAddress } from './task-address.ts';

/**
 * How often the certificate is read again: the bootstrap renews it 30 days before it expires, so a task that runs
 * for months presents the renewed one without a restart.
 */
const CERTIFICATE_REFRESH_MS = 6 * 3600_000;

/**
 * The TLS material the endpoint serves: the controller's server key (the sealed secret, as the signing functions read
 * it) and the server certificate the bootstrap issued for the routers' host (`CTRL_SERVER_NAME`). This process holds
 * no CA key, so a certificate that does not name the host is an error to fix in the stack, not one issued here.
 */
async function serverTls(deps: Deps, serverName: string): Promise<{ key: string; cert: string }> {
  const [certificate, key] = await Promise.all([
    ensureServerCertificate(deps, [serverName]),
    deps.signers.server.privateKeyPem(),
  ]);
  return { key, cert: certificate.chainPem };
}

/**
 * The routers' control channel as a process of its own (the ECS task on AWS): a TLS listener that asks for the
 * router's certificate and speaks the channel on connections that negotiated `ziti-ctrl`, backed by the table every
 * function uses. Routers connect to one task each; what the tasks must agree on is in the table (router connections
 * and their leases).
 */
async function main(): Promise<void> {
  const deps = createEndpointDeps();
  const serverName = process.env.CTRL_SERVER_NAME;
  if (!serverName) throw new Error('CTRL_SERVER_NAME must name the host routers dial (the stack sets it)');
  const port = Number(process.env.CTRL_PORT || DEFAULT_CTRL_PORT);
  const tls = await serverTls(deps, serverName);
  // Several tasks: each relays the messages for the routers it holds (a circuit's routers may be on several).
  const relayHost = await taskAddress();
  const relayPort = Number(process.env.CTRL_RELAY_PORT || DEFAULT_CTRL_RELAY_PORT);
  if (!relayHost) deps.logger.warn('ctrl relay off: no task address (CTRL_RELAY_HOST or the ECS task metadata)');
  const endpoint = createCtrlEndpoint({
    deps,
    ...(relayHost ? { relay: { tls, host: relayHost, port: relayPort } } : {}),
  });
  const { relayPort: relayListening } = await endpoint.ready;
  if (relayListening) deps.logger.info('ctrl relay listening', { host: relayHost, port: relayListening });
  const server = routersListener(endpoint, tls);
  const refresh = setInterval(() => {
    serverTls(deps, serverName)
      .then((renewed) => {
        server.setSecureContext(renewed);
        endpoint.setSecureContext(renewed);
      })
      .catch((error: Error) => deps.logger.warn('ctrl endpoint certificate not refreshed', { detail: error.message }));
  }, CERTIFICATE_REFRESH_MS);
  server.listen(port, () => deps.logger.info('ctrl endpoint listening', { port }));

  // ECS stops a task with SIGTERM: its routers reconnect, through the load balancer, to another task.
  process.once('SIGTERM', () => {
    clearInterval(refresh);
    endpoint.close();
    server.close(() => process.exit(0));
  });
}

main().catch((error: Error) => {
  process.stderr.write(
    `${JSON.stringify({ level: 'ERROR', message: 'ctrl endpoint failed to start', detail: error.message })}\n`,
  );
  process.exit(1);
});
