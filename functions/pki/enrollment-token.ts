import { type Authenticator, authenticators } from '#shared/entities/authenticator.ts';
import { type Enrollment, enrollments } from '#shared/entities/enrollment.ts';
import { revocations } from '#shared/entities/revocation.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { type OperationRequest, queryValue } from '#shared/http/operation.ts';
import { newId } from '#shared/ids.ts';
import {
  type CertificateSubject,
  type IssueOptions,
  issueClientCertificate,
  parseCsr,
  UnusableCsrError,
} from '#shared/pki/issue-certificate.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import { controllerNames } from '#shared/pki/server-certificate.ts';
import { trustDomainOf } from '#shared/pki/trust-domain.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { limitLoginAttempt } from '#shared/rate-limit/login-limits.ts';
import type { Stored } from '#shared/store/entity-store.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a token is shaped like one we issue (a uuid); anything else names nothing and costs no read. */
export function isTokenShaped(token: string | undefined): token is string {
  return typeof token === 'string' && UUID.test(token);
}

/** The token of an enrollment request: the JSON body's `token`, else the `token` query parameter (legacy form). */
export function tokenOf(request: OperationRequest): string | undefined {
  const body = request.body;
  if (body && typeof body === 'object' && typeof (body as { token?: unknown }).token === 'string') {
    return (body as { token: string }).token;
  }
  return queryValue(request, 'token');
}

/**
 * The outstanding enrollment a token names, of the method the caller enrolls with. Enrollment is throttled like a
 * login, per source address, before it costs a read or a signature. Unknown, used, revoked or malformed tokens are all
 * the same 400; a token of another method is 400 `INVALID_ENROLL_METHOD`, an expired one 400 `ENROLLMENT_EXPIRED`.
 */
export async function outstandingEnrollment(
  deps: Deps,
  request: OperationRequest,
  method: Enrollment['method'],
): Promise<Stored<Enrollment>> {
  await limitLoginAttempt(deps, request.sourceIp);
  const token = tokenOf(request);
  const invalid = () => new ApiError('INVALID_ENROLLMENT_TOKEN');
  if (!isTokenShaped(token)) throw invalid();
  const normalized = token.toLowerCase();
  const [id, revoked] = await Promise.all([
    deps.store.findIdByUnique(enrollments, 'token', normalized),
    deps.store.get(revocations, normalized),
  ]);
  const stored = id && !revoked ? await deps.store.get(enrollments, id) : undefined;
  if (!stored) throw invalid();
  if (stored.doc.method !== method) {
    throw new ApiError('INVALID_ENROLL_METHOD', {
      cause: { message: `the token is for ${stored.doc.method} enrollment, not ${method}` },
    });
  }
  if (Date.parse(stored.doc.expiresAt) <= deps.now().getTime()) throw new ApiError('ENROLLMENT_EXPIRED');
  return stored;
}

/** What an authenticator holds besides its identity and the fields every entity has. */
export type Credential = Omit<Authenticator, 'id' | 'createdAt' | 'updatedAt' | 'tags' | 'identityId'>;

/**
 * The writes that create an identity's authenticator. `newIdentity` when the identity is created in the same
 * transaction (DynamoDB cannot check what the transaction also writes). A fingerprint already held is 409
 * `CERT_IN_USE`.
 */
export function authenticatorOps(
  deps: Deps,
  identityId: string,
  credential: Credential,
  newIdentity = false,
): WriteOp[] {
  const now = deps.now().toISOString();
  return deps.store
    .createOps(
      authenticators,
      { id: newId(), createdAt: now, updatedAt: now, tags: {}, identityId, ...credential },
      newIdentity ? ['identityId'] : [],
    )
    .map(inUse);
}

/**
 * The writes that complete an enrollment: its authenticator created and the enrollment deleted in one transaction
 * (version-checked, so a replay or a concurrent use of the token finds nothing and answers INVALID_ENROLLMENT_TOKEN).
 */
export function completeEnrollmentOps(deps: Deps, stored: Stored<Enrollment>, credential: Credential): WriteOp[] {
  return [
    ...authenticatorOps(deps, stored.doc.identityId, credential),
    ...deps.store
      .deleteOps(enrollments, stored.doc, stored.version)
      .map((op) => ({ ...op, onConditionFailed: () => new ApiError('INVALID_ENROLLMENT_TOKEN') })),
  ];
}

/** A write whose conflict on a certificate (fingerprint or external id) answers 409 `CERT_IN_USE`. */
export function inUse(op: WriteOp): WriteOp {
  return op.onConditionFailed ? { ...op, onConditionFailed: certInUseOr(op.onConditionFailed) } : op;
}

/**
 * A fingerprint marker held by another authenticator (or an external id held by another identity) is the
 * reference's 409 `CERT_IN_USE`; other conflicts keep their error.
 */
export function certInUseOr(makeError: () => ApiError): () => ApiError {
  return () => {
    const error = makeError();
    const cause = error.apiCause;
    if (cause && 'field' in cause && (cause.field === 'fingerprint' || cause.field === 'externalId')) {
      return new ApiError('CERT_IN_USE', { cause: { message: 'the certificate is in use', fingerprint: cause.value } });
    }
    return error;
  };
}

/**
 * A certificate for a CSR from the signing CA (one `Sign`), naming `whom` (an identity or router by id, whatever the
 * CSR's subject says); an unusable CSR, or a server CSR naming what its router may not (the controller's own names
 * among them), is 400 `COULD_NOT_PROCESS_CSR`.
 */
export async function certificateForCsr(
  deps: Deps,
  csrPem: string | undefined,
  whom: { kind: CertificateSubject['kind']; id: string },
  options: Omit<IssueOptions, 'subject' | 'controllerNames'> = {},
) {
  const [ca, refused] = await Promise.all([
    networkCa(deps),
    options.kind === 'server' ? controllerNames(deps) : Promise.resolve([]),
  ]);
  const subject = { ...whom, trustDomain: trustDomainOf(deps.config.trustDomain, ca) };
  try {
    const csr = await parseCsr(csrPem ?? '');
    const issued = await issueClientCertificate(deps.signers.signingCa, ca.signingCertPem, csr, deps.now(), {
      ...options,
      controllerNames: refused,
      loopback: deps.config.loopbackRouters,
      subject,
    });
    return { ...issued, chainPem: `${issued.pem.trim()}\n${ca.signingCertPem.trim()}\n`, ca };
  } catch (error) {
    if (!(error instanceof UnusableCsrError)) throw error;
    throw new ApiError('COULD_NOT_PROCESS_CSR', { cause: { message: error.message } });
  }
}

/** The CA bundle an enrolled client trusts (root and signing CA, PEM). */
export function caBundlePem(ca: { rootCertPem: string; signingCertPem: string }): string {
  return `${ca.rootCertPem.trim()}\n${ca.signingCertPem.trim()}\n`;
}
