import * as z from 'zod';
import type { Deps } from '#shared/deps.ts';
import { authenticators } from '#shared/entities/authenticator.ts';
import { type Enrollment, enrollments } from '#shared/entities/enrollment.ts';
import { ApiError } from '#shared/http/api-error.ts';
import { ok } from '#shared/http/envelope.ts';
import { documented, type Operation, type OperationRequest, queryValue } from '#shared/http/operation.ts';
import { newId } from '#shared/ids.ts';
import { issueClientCertificate, parseCsr, UnusableCsrError } from '#shared/pki/issue-certificate.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import { limitLoginAttempt } from '#shared/rate-limit/login-limits.ts';
import type { Stored } from '#shared/store/entity-store.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ottBodySchema = z.object({ token: z.string().optional(), clientCsr: z.string().optional() });

/** The outstanding enrollment a token names; unknown, used or malformed tokens are all the same 400. */
async function enrollmentOf(deps: Deps, token: string | undefined): Promise<Stored<Enrollment>> {
  const invalid = () => new ApiError('INVALID_ENROLLMENT_TOKEN');
  if (!token || !UUID.test(token)) throw invalid();
  const id = await deps.store.findIdByUnique(enrollments, 'token', token.toLowerCase());
  const stored = id ? await deps.store.get(enrollments, id) : undefined;
  if (!stored) throw invalid();
  return stored;
}

/**
 * Issues the enrolling identity's certificate from the signing CA and, in one transaction, creates its cert
 * authenticator and deletes the enrollment (the token is single-use: a replay finds nothing). One `Sign`.
 */
async function enrollWithCsr(deps: Deps, sourceIp: string, token: string | undefined, csrPem: string | undefined) {
  // Enrollment is throttled like a login, per source address, before it costs a read or a KMS signature.
  await limitLoginAttempt(deps, sourceIp);
  const stored = await enrollmentOf(deps, token);
  const enrollment = stored.doc;
  if (enrollment.method !== 'ott') throw new ApiError('INVALID_ENROLL_METHOD');
  if (Date.parse(enrollment.expiresAt) <= deps.now().getTime()) throw new ApiError('ENROLLMENT_EXPIRED');
  const ca = await networkCa(deps);
  let issued: Awaited<ReturnType<typeof issueClientCertificate>>;
  try {
    const csr = await parseCsr(csrPem ?? '');
    issued = await issueClientCertificate(deps.signers.signingCa, ca.signingCertPem, csr, deps.now());
  } catch (error) {
    if (!(error instanceof UnusableCsrError)) throw error;
    throw new ApiError('COULD_NOT_PROCESS_CSR', { cause: { message: error.message } });
  }
  const now = deps.now().toISOString();
  await deps.store.transact([
    ...deps.store.createOps(
      authenticators,
      {
        id: newId(),
        createdAt: now,
        updatedAt: now,
        tags: {},
        identityId: enrollment.identityId,
        method: 'cert',
        certPem: issued.pem,
        fingerprint: issued.fingerprint,
        isIssuedByNetwork: true,
      },
      ['identityId'],
    ),
    ...deps.store
      .deleteOps(enrollments, enrollment, stored.version)
      .map((op) => ({ ...op, onConditionFailed: () => new ApiError('INVALID_ENROLLMENT_TOKEN') })),
  ]);
  return ok({ cert: `${issued.pem}\n${ca.signingCertPem}`, ca: `${ca.rootCertPem}\n${ca.signingCertPem}` });
}

/** `POST /enroll/ott` `{token, clientCsr}`. */
export const enrollOtt: Operation = documented(
  async (request, deps) => {
    const body = ottBodySchema.safeParse(request.body ?? {});
    const input = body.success ? body.data : {};
    return enrollWithCsr(deps, request.sourceIp, input.token ?? queryValue(request, 'token'), input.clientCsr);
  },
  { body: ottBodySchema },
);

/** The CSR of the legacy form: the raw PEM body SDKs send, or `clientCsr` in a JSON body. */
function legacyCsr(request: OperationRequest): string | undefined {
  if (request.body && typeof request.body === 'object') {
    const csr = (request.body as { clientCsr?: unknown }).clientCsr;
    return typeof csr === 'string' ? csr : undefined;
  }
  return request.rawBody;
}

/**
 * `POST /enroll?method=…&token=…`, the form SDKs use (method defaults to ott). Only ott is served so far; the other
 * methods answer INVALID_ENROLL_METHOD until they are built.
 */
export const enroll: Operation = async (request, deps) => {
  const method = queryValue(request, 'method') ?? 'ott';
  if (method !== 'ott') throw new ApiError('INVALID_ENROLL_METHOD', { cause: { message: `method ${method}` } });
  return enrollWithCsr(deps, request.sourceIp, queryValue(request, 'token'), legacyCsr(request));
};
