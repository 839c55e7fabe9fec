import type { HttpMethod } from '../routes/route.ts';

/**
 * Cross-origin access, as the reference controller allows it: any origin, the methods of the API and the headers its
 * clients send. Browser clients (the admin console) authenticate with the `zt-session` header, never cookies, so
 * `*` is enough and no credentialed mode is needed.
 *
 * Only methods of the route table are advertised. HEAD is not one: API Gateway serves only the methods created on
 * each resource, and a HEAD twin of every GET would grow the API by as many methods for no client that uses them
 * (browsers never preflight HEAD in any case).
 */
export const CORS_ALLOWED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const satisfies readonly HttpMethod[];
export const CORS_ALLOWED_HEADERS = ['content-type', 'accept', 'authorization', 'zt-session'] as const;
/** Response headers a browser page may read besides the safe-listed ones: the session token and its expiry, and when to retry a 429. */
export const CORS_EXPOSED_HEADERS = [
  'zt-session',
  'expiration-seconds',
  'expires-at',
  'www-authenticate',
  'retry-after',
] as const;
export const CORS_MAX_AGE_SECONDS = 600;

/** Headers on every response. */
export const CORS_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': CORS_EXPOSED_HEADERS.join(', '),
};

/** Headers of the answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`). */
export const CORS_PREFLIGHT_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': CORS_ALLOWED_METHODS.join(', '),
  'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
  'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
};
