import { createServer, type Server, type TLSSocket } from 'node:tls';
import { CTRL_ALPN, type CtrlEndpoint } from './ctrl-endpoint.ts';

/**
 * The TLS listener routers dial for an endpoint's control channel: the controller's server certificate, the router's
 * own asked for (it is checked against its stored fingerprint by the endpoint, `router-certificate.ts`, not against a
 * CA here), connections that negotiated `ziti-ctrl` handed to the endpoint and the others closed. A handshake that
 * fails (a load balancer's health check opens and closes TCP connections without one) is nothing to log. Not yet
 * listening: the caller binds it.
 */
export function routersListener(endpoint: CtrlEndpoint, tls: { readonly key: string; readonly cert: string }): Server {
  const server = createServer({
    key: tls.key,
    cert: tls.cert,
    requestCert: true,
    rejectUnauthorized: false,
    ALPNProtocols: [CTRL_ALPN],
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    if (socket.alpnProtocol === CTRL_ALPN) endpoint.accept(socket);
    else socket.destroy();
  });
  server.on('tlsClientError', () => undefined);
  return server;
}
