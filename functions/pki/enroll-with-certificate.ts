import type { X509Certificate } from 'node:crypto';
import * as z from 'zod';
import { authenticators } from '#shared/entities/authenticator.ts';
import { type Ca, cas } from '#shared/entities/ca.ts';
import { identities, newIdentity } from '#shared/entities/identity.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { empty } from '#shared/http/envelope.ts';
import { clientCertificateMissing } from '#shared/http/mtls-address.ts';
import { documented, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { newId } from '#shared/ids.ts';
import { isClientLeaf, isSignedByCa } from '#shared/pki/ca-trust.ts';
import { commonNameOf, fingerprintOf, firstCertificateOf } from '#shared/pki/certificates.ts';
import { externalIdOf } from '#shared/pki/external-id-claim.ts';
import { allCas } from '#shared/pki/trusted-cas.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { limitLoginAttempt } from '#shared/rate-limit/login-limits.ts';
import { authenticatorOps, completeEnrollmentOps, inUse, outstandingEnrollment } from './enrollment-token.ts';
import { fittedName } from './fitted-name.ts';

/** The client certificate of the TLS handshake (API Gateway's mTLS, or the local server); 400 without one. */
function presentedCertificate(request: OperationRequest, deps: Deps): X509Certificate {
  const certificate = firstCertificateOf(request.clientCertPem);
  if (!certificate) {
    throw clientCertificateMissing(
      deps,
      new ApiError('CERTIFICATE_FAILED_VALIDATION', {
        message: 'This enrollment needs the client certificate the CA issued, presented in the TLS handshake.',
      }),
    );
  }
  return certificate;
}

/** Whether a certificate is a client's, signed by the CA's own certificate (`ca-trust.ts`). */
async function issuedByCa(certificate: X509Certificate, ca: Ca): Promise<boolean> {
  return (await isClientLeaf(certificate)) && isSignedByCa(certificate, ca);
}

/**
 * ottca: the identity proves it holds a certificate of the enrollment's CA (verified, with ottca enabled); that
 * certificate becomes its cert authenticator, tied to the CA, as the enrollment is deleted.
 */
export async function enrollByOttCa(request: OperationRequest, deps: Deps) {
  const stored = await outstandingEnrollment(deps, request, 'ottca');
  const ca = stored.doc.caId ? (await deps.store.get(cas, stored.doc.caId))?.doc : undefined;
  if (!ca?.isVerified || !ca.isOttCaEnrollmentEnabled) throw new ApiError('ENROLLMENT_CA_NOT_VALID');
  const certificate = presentedCertificate(request, deps);
  if (!(await issuedByCa(certificate, ca))) throw new ApiError('CERTIFICATE_FAILED_VALIDATION');
  await deps.store.transact(
    completeEnrollmentOps(deps, stored, {
      method: 'cert',
      certPem: certificate.toString(),
      fingerprint: fingerprintOf(certificate),
      isIssuedByNetwork: false,
      caId: ca.id,
      certIssuedAt: new Date(certificate.validFrom).toISOString(),
    }),
  );
  deps.metrics.count('Enrollments', { method: 'ottca' });
  request.logger.info('identity enrolled', { method: 'ottca', identityId: stored.doc.identityId, caId: ca.id });
  return empty();
}

/** `POST /enroll/ottca` `{token}` with the CA's certificate in the TLS handshake. */
export const enrollOttCa: Operation = documented((request, deps) => enrollByOttCa(request, deps), {
  body: z.object({ token: z.string().optional() }),
});

/** How many numbered names auto-enrollment tries before giving up on a crowded name format. */
const MAX_NAME_ATTEMPTS = 16;

const NAME_TOKENS = /\[(caName|caId|commonName|requestedName|identityId)\]/g;

/**
 * The new identity's name from the CA's format (`[caName] [caId] [commonName] [requestedName] [identityId]`). Tokens
 * are expanded in the format only, in one pass: a certificate whose common name reads `[caId]` is named that text.
 */
function formattedName(ca: Ca, commonName: string, requestedName: string, identityId: string): string {
  const values: Record<string, string> = { caName: ca.name, caId: ca.id, commonName, requestedName, identityId };
  return ca.identityNameFormat.replace(NAME_TOKENS, (_, token: string) => values[token] ?? '');
}

/**
 * The first free name: the formatted one, then with a 6-digit counter appended cumulatively, as the reference does;
 * each cut to the name rule's 255 characters first, so a long common name or claim still makes a name the identity can
 * be saved with.
 */
export async function freeName(deps: Deps, base: string): Promise<string> {
  let suffix = '';
  for (let attempt = 1; attempt <= MAX_NAME_ATTEMPTS; attempt++) {
    const name = fittedName(base, suffix);
    if (!(await deps.store.findIdByUnique(identities, 'name', name))) return name;
    suffix = `${suffix}${String(attempt).padStart(6, '0')}`;
  }
  throw new ApiError('COULD_NOT_VALIDATE', { message: `No free identity name of the form ${base} was found.` });
}

const caBodySchema = z.object({ name: z.string().trim().min(1).max(255).optional() });

/**
 * ca (auto-enrollment): a certificate of a verified CA with auto-enrollment makes a new identity, named by the CA's
 * format with its `identityRoles`. With an `externalIdClaim` the identity gets the claim as `externalId` and no
 * authenticator (cert login finds it by the claim); otherwise the certificate becomes its cert authenticator.
 */
export async function enrollByCa(request: OperationRequest, deps: Deps) {
  await limitLoginAttempt(deps, request.sourceIp);
  const certificate = presentedCertificate(request, deps);
  const enrolling = (await allCas(deps)).filter((ca) => ca.isVerified && ca.isAutoCaEnrollmentEnabled);
  if (enrolling.length === 0) throw new ApiError('ENROLLMENT_NO_VALID_CAS');
  // The certificate is checked once; then the first CA whose signature it carries.
  const ca = (await isClientLeaf(certificate))
    ? enrolling.find((candidate) => isSignedByCa(certificate, candidate))
    : undefined;
  if (!ca) throw new ApiError('CERT_FAILED_VALIDATION');
  const externalId = ca.externalIdClaim ? externalIdOf(certificate, ca.externalIdClaim) : undefined;
  if (ca.externalIdClaim && !externalId) throw new ApiError('MISSING_CERT_CLAIM');
  const fingerprint = fingerprintOf(certificate);
  if (!externalId && (await deps.store.findIdByUnique(authenticators, 'fingerprint', fingerprint))) {
    throw new ApiError('CERT_IN_USE', { cause: { message: 'the certificate is in use', fingerprint } });
  }
  const body = parseWithDefault(request);
  const id = newId();
  const name = await freeName(deps, formattedName(ca, commonNameOf(certificate), body.name ?? id, id).trim() || id);
  const now = deps.now().toISOString();
  const identity = newIdentity({
    id,
    name,
    createdAt: now,
    roleAttributes: [...ca.identityRoles],
    externalId: externalId ?? null,
  });
  const ops = deps.store.createOps(identities, identity).map(inUse);
  if (!externalId) {
    const credential = {
      method: 'cert' as const,
      certPem: certificate.toString(),
      fingerprint,
      isIssuedByNetwork: false,
      caId: ca.id,
      certIssuedAt: new Date(certificate.validFrom).toISOString(),
    };
    ops.push(...authenticatorOps(deps, id, credential, true));
  }
  await deps.store.transact(ops);
  deps.metrics.count('Enrollments', { method: 'ca' });
  request.logger.info('identity auto-enrolled', { identityId: id, caId: ca.id });
  return empty();
}

/** The optional `{name}` of an auto-enrollment (SDKs post JSON; anything else is no name). */
function parseWithDefault(request: OperationRequest): { name?: string } {
  const parsed = caBodySchema.safeParse(request.body ?? {});
  return parsed.success ? parsed.data : {};
}

/** `POST /enroll/ca` with the CA's certificate in the TLS handshake, optional `{name}`. */
export const enrollCa: Operation = documented((request, deps) => enrollByCa(request, deps), { body: caBodySchema });
