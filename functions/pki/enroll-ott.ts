import * as z from 'zod';
import { ok } from '#shared/http/envelope.ts';
import { documented, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { caBundlePem, certificateForCsr, completeEnrollmentOps, outstandingEnrollment } from './enrollment-token.ts';

const ottBodySchema = z.object({ token: z.string().optional(), clientCsr: z.string().optional() });

/** The CSR of an enrollment request: `clientCsr` of a JSON body, else the raw PEM body SDKs send (legacy form). */
export function csrOf(request: OperationRequest, field = 'clientCsr'): string | undefined {
  if (request.body && typeof request.body === 'object') {
    const csr = (request.body as Record<string, unknown>)[field];
    return typeof csr === 'string' ? csr : undefined;
  }
  return request.rawBody;
}

/**
 * ott: issues the identity's certificate from the signing CA (one `Sign`) and, in one transaction, creates its cert
 * authenticator and deletes the enrollment (the token is single-use: a replay finds nothing).
 */
export async function enrollByOtt(request: OperationRequest, deps: Parameters<Operation>[1]) {
  const stored = await outstandingEnrollment(deps, request, 'ott');
  const issued = await certificateForCsr(deps, csrOf(request), { kind: 'identity', id: stored.doc.identityId });
  await deps.store.transact(
    completeEnrollmentOps(deps, stored, {
      method: 'cert',
      certPem: issued.pem,
      fingerprint: issued.fingerprint,
      isIssuedByNetwork: true,
      certIssuedAt: deps.now().toISOString(),
    }),
  );
  deps.metrics.count('Enrollments', { method: 'ott' });
  request.logger.info('identity enrolled', { method: 'ott', identityId: stored.doc.identityId });
  return ok({ cert: issued.chainPem, ca: caBundlePem(issued.ca) });
}

/** `POST /enroll/ott` `{token, clientCsr}`. */
export const enrollOtt: Operation = documented((request, deps) => enrollByOtt(request, deps), { body: ottBodySchema });
