/** The port an `https:` base URL without one is reached at. */
const HTTPS_PORT = '443';

/**
 * The address routers dial the control channel at, as the reference writes transport addresses: `tls:<host>:<port>`.
 * The configured one (`CTRL_ADDRESS`), else the host and port the controller's API is reached at (`baseUrl`: the public
 * base URL, or the request's): locally the control channel shares that listener, told apart by ALPN (`ziti-ctrl`).
 */
export function ctrlAddressOf(configured: string | undefined, baseUrl: string): string {
  if (configured) return configured;
  const url = new URL(baseUrl);
  return `tls:${url.hostname}:${url.port || HTTPS_PORT}`;
}
