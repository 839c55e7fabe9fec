import { ApiError } from '../errors/api-error.ts';
import type { Deps } from '../ports/deps.ts';

/**
 * What to answer a request that needs a client certificate and came without one. API Gateway's mutual TLS makes a
 * certificate mandatory for a whole domain, so on AWS the plain domain never sees one: the request is answered 421
 * `MISDIRECTED_REQUEST` with the mTLS domain in `ziti-ctrl-address`, the header OpenZiti SDKs follow to a new
 * controller address (C SDK `ctrl_default_cb`: it switches its controller URL for every later request and reports
 * the new address for the identity file). The code is one SDKs do not read as "authentication failed", so they retry
 * the login, now at the mTLS address, instead of giving up. Without an mTLS address (one local listener asking for
 * an optional certificate), or behind the load balancer (one address that asks for an optional certificate: a client
 * that sent none has none), the request simply fails as `otherwise`.
 */
export function clientCertificateMissing(deps: Deps, otherwise: ApiError): ApiError {
  const address = deps.config.mtlsBaseUrl;
  if (!address || deps.config.frontDoor === 'alb') return otherwise;
  return new ApiError('MISDIRECTED_REQUEST', {
    headers: { 'ziti-ctrl-address': address },
    cause: { message: `send requests that authenticate with a client certificate to ${address}` },
  });
}
