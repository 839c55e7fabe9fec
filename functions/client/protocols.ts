import { ok } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';

/**
 * `GET /protocols`: the listening Edge protocols. The only one is the HTTPS API the caller reached, as
 * `host:port` (the reference's `edge.api.address`).
 */
export const listProtocols: Operation = async (request) => {
  const url = new URL(request.baseUrl);
  const port = url.port || (url.protocol === 'http:' ? '80' : '443');
  return ok({ https: { address: `${url.hostname}:${port}` } });
};
