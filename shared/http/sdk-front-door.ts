import type { Deps } from '../ports/deps.ts';
import type { OperationRequest } from './operation.ts';

/**
 * Whether a request came in at the SDKs' front door: the plain address one-time-token enrollment JWTs name, beside
 * the admins' plain address and the mTLS one.
 *
 * Why a door of its own: an SDK enrolls at the JWT's `iss` without a certificate, so that address cannot require
 * one, yet it must then log in where its certificate is seen. The C SDK (1.18.2, under every tunneler) follows a
 * `ziti-ctrl-address` header on any answer of its controller client, but its legacy login runs on a client of its own
 * made from the controller address when the first `/version` answer arrives — before that answer's header is
 * applied. A `/version` that fails with the header is what leads it: the SDK switches address, asks `/version` again
 * five seconds later at the new address and logs in there (tried: `ziti-prox-c` against `npm start` with
 * `CONTROLLER_MTLS_PORT` and `CONTROLLER_SDK_PORT`). No other client may get that answer — the console, the CLI and
 * password or ext-jwt SDKs must stay — and a plain address cannot tell an SDK holding a certificate from them, hence
 * the door: only enrolled SDKs are sent there.
 */
export function atSdkFrontDoor(deps: Deps, request: OperationRequest): boolean {
  const { sdkBaseUrl, mtlsBaseUrl, frontDoor } = deps.config;
  // The load balancer is one address for every client: no door to send SDKs through.
  if (!sdkBaseUrl || !mtlsBaseUrl || frontDoor === 'alb') return false;
  const addressed = authorityOf(request.headers.host ?? '');
  return addressed !== undefined && addressed === authorityOf(new URL(sdkBaseUrl).host);
}

/** `host[:port]`: a name, or an IPv6 address in brackets, and an optional port; nothing else (no user, no path). */
const AUTHORITY = /^(\[[0-9a-f:.]+\]|[^:[\]/@?#\s]+)(?::(\d{1,5}))?$/i;

/**
 * An authority as a key that names the same address however it is written: the name lowercased and without the
 * trailing dot of a fully qualified name, HTTPS's default port 443 left out (`Host: ziti.example.com:443` and
 * `ziti.example.com.` are the door at `https://ziti.example.com`). Undefined for text that is no authority.
 */
function authorityOf(host: string): string | undefined {
  const parsed = AUTHORITY.exec(host);
  if (!parsed) return undefined;
  const name = parsed[1]!.toLowerCase().replace(/\.$/, '');
  const port = parsed[2] === undefined ? 443 : Number(parsed[2]);
  return port === 443 ? name : `${name}:${port}`;
}
