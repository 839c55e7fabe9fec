/** A failed or refused JWKS fetch; its message goes to the log, never to the caller. */
export class JwksError extends Error {
  override readonly name = 'JwksError';
}
