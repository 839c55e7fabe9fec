import { ApiError } from '#shared/errors/api-error.ts';
import { type Operation, queryValue } from '#shared/http/operation.ts';
import { enrollByOtt } from './enroll-ott.ts';
import { enrollRouter } from './enroll-router.ts';
import { enrollByUpdb } from './enroll-updb.ts';
import { enrollByCa, enrollByOttCa } from './enroll-with-certificate.ts';

/**
 * `POST /enroll?method=…&token=…`, the form SDKs and routers use (method defaults to ott): the same flows as the
 * per-method routes, bodies as PEM (`application/x-pem-file`, `text/plain`) or JSON.
 */
export const enroll: Operation = async (request, deps) => {
  const method = queryValue(request, 'method') ?? 'ott';
  switch (method) {
    case 'ott':
      return enrollByOtt(request, deps);
    case 'updb':
      return enrollByUpdb(request, deps);
    case 'ottca':
      return enrollByOttCa(request, deps);
    case 'ca':
      return enrollByCa(request, deps);
    case 'erott':
    case 'trott':
      return enrollRouter(request, deps, method);
    default:
      throw new ApiError('INVALID_ENROLL_METHOD', { cause: { message: `unknown method ${method}` } });
  }
};
