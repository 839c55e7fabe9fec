import * as z from 'zod';
import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { type Authenticator, authenticators } from '#shared/entities/authenticator.ts';
import { enrollments } from '#shared/entities/enrollment.ts';
import { ApiError, invalidField, notFound } from '#shared/errors/api-error.ts';
import { created, empty, ok } from '#shared/http/envelope.ts';
import { clientCertificateMissing } from '#shared/http/mtls-address.ts';
import { callerOf, documented, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { newId } from '#shared/ids.ts';
import { fingerprintOf, firstCertificateOf } from '#shared/pki/certificates.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { expiresAtField } from '#shared/schemas/common-fields.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import { requestedEnrollment } from './enrollment-api.ts';
import { caBundlePem, certificateForCsr } from './enrollment-token.ts';

const reEnrollSchema = z.object({ expiresAt: expiresAtField });

/**
 * `POST /authenticators/{id}/re-enroll {expiresAt}`: the authenticator is deleted and an enrollment of the matching
 * method made in the same transaction (updb → updb with its username, a CA's certificate → ottca, else ott); the
 * sessions it opened end with it (its delete's `ended` notice: the routers drop them, the table loses them).
 */
const reEnrollAuthenticator: Operation = documented(
  async (request, deps) => {
    const { expiresAt } = parseWith(reEnrollSchema, request.body ?? {});
    const enrollmentId = newId();
    await withOptimisticRetry(async () => {
      const stored = await getOrNotFound(deps, authenticators, request.pathParameters.id ?? '');
      const authenticator = stored.doc;
      const method = authenticator.method === 'updb' ? 'updb' : authenticator.caId ? 'ottca' : 'ott';
      const { doc } = await requestedEnrollment(
        { deps, request, now: deps.now().toISOString(), id: enrollmentId },
        {
          identityId: authenticator.identityId,
          method,
          expiresAt,
          caId: authenticator.caId ?? null,
          username: authenticator.username ?? null,
        },
      );
      // The username frees up in this transaction, so no check that it is free (it is this authenticator's).
      const ops = [
        ...deps.store.deleteOps(authenticators, authenticator, stored.version),
        ...deps.store.createOps(enrollments, doc),
      ];
      await deps.store.transact(ops);
    });
    request.logger.info('authenticator reverted to enrollment', { id: request.pathParameters.id, enrollmentId });
    return created('enrollments', enrollmentId);
  },
  { body: reEnrollSchema },
);

/** A network-issued certificate authenticator, which alone can be extended (400 on `method` otherwise). */
function requireExtendable(authenticator: Authenticator): void {
  if (authenticator.method !== 'cert' || !authenticator.isIssuedByNetwork) {
    throw invalidField('method', 'only certificates the network issued can be extended', authenticator.method);
  }
}

const requestExtendSchema = z.object({ rollKeys: z.boolean().nullable().optional() });

/**
 * `POST /authenticators/{id}/request-extend {rollKeys}`: the identity is told at its next cert logins
 * (`isCertExtendRequested`, the `ziti-authenticator-extend-requested` header) to extend, with a new key if asked.
 */
const requestExtendAuthenticator: Operation = documented(
  async (request, deps) => {
    const { rollKeys } = parseWith(requestExtendSchema, request.body ?? {});
    await withOptimisticRetry(async () => {
      const stored = await getOrNotFound(deps, authenticators, request.pathParameters.id ?? '');
      requireExtendable(stored.doc);
      const next = {
        ...stored.doc,
        isExtendRequested: true,
        isKeyRollRequested: rollKeys === true,
        updatedAt: deps.now().toISOString(),
      };
      await deps.store.transact(deps.store.replaceOps(authenticators, stored, next));
    });
    return empty();
  },
  { body: requestExtendSchema },
);

/** The caller's own authenticator (404 for anyone else's, as if it did not exist). */
async function ownAuthenticator(request: OperationRequest, deps: Deps) {
  const id = request.pathParameters.id ?? '';
  const stored = await deps.store.get(authenticators, id);
  if (!stored || stored.doc.identityId !== callerOf(request).identity.id) throw notFound('authenticator', id);
  return stored;
}

/**
 * Refuses (401) a certificate change asked without proof of the device: the TLS client certificate must be one of
 * `fingerprints` (the authenticator's current certificate, and for verification also the one just issued). A
 * password or ext-jwt session, or a leaked session token, holds none of their keys, so it cannot replace the device's
 * certificate with its own (as the reference requires, extension is asked over mTLS with the current certificate).
 */
function requirePresentedCertificate(
  request: OperationRequest,
  deps: Deps,
  fingerprints: readonly (string | null | undefined)[],
) {
  const refused = new ApiError('UNAUTHORIZED', {
    message: "Extending a certificate needs the authenticator's current certificate as the TLS client certificate.",
  });
  const presented = firstCertificateOf(request.clientCertPem);
  if (!presented) throw clientCertificateMissing(deps, refused);
  if (!fingerprints.includes(fingerprintOf(presented))) throw refused;
}

const extendSchema = z.object({ clientCertCsr: z.string().min(1) });

/**
 * `POST /current-identity/authenticators/{id}/extend {clientCertCsr}`: a new certificate (one `Sign`), held as the
 * authenticator's unverified one; the current certificate keeps working until the client verifies the new one.
 * Ownership, kind and the presented certificate are checked before anything is signed; the write is conditioned on
 * the version read, so a certificate that changed meanwhile is checked again.
 */
const extendCurrentIdentityAuthenticator: Operation = documented(
  async (request, deps) => {
    const { clientCertCsr } = parseWith(extendSchema, request.body ?? {});
    const checked = async () => {
      const stored = await ownAuthenticator(request, deps);
      requireExtendable(stored.doc);
      requirePresentedCertificate(request, deps, [stored.doc.fingerprint]);
      return stored;
    };
    await checked();
    const identity = { kind: 'identity' as const, id: callerOf(request).identity.id };
    const issued = await certificateForCsr(deps, clientCertCsr, identity);
    await withOptimisticRetry(async () => {
      const stored = await checked();
      const next = {
        ...stored.doc,
        unverifiedCertPem: issued.pem,
        unverifiedFingerprint: issued.fingerprint,
        updatedAt: deps.now().toISOString(),
      };
      await deps.store.transact(deps.store.replaceOps(authenticators, stored, next));
    });
    request.logger.info('certificate extension issued', { authenticatorId: request.pathParameters.id });
    return ok({ clientCert: issued.chainPem, ca: caBundlePem(issued.ca) });
  },
  { body: extendSchema },
);

const extendVerifySchema = z.object({ clientCert: z.string().min(1) });

/**
 * `POST /current-identity/authenticators/{id}/extend-verify {clientCert}`: the client shows it received the new
 * certificate; it replaces the old one (the fingerprint marker moves), so the old certificate stops logging in. Asked
 * over mTLS with the current or the new certificate, like the extension itself. The authenticator stays (the same
 * id), and with it the API sessions it opened: an extension is the device renewing its own certificate, not an
 * authenticator going, as in the reference (unlike a delete or re-enroll, which end them: `isRevoked`).
 */
const extendVerifyCurrentIdentityAuthenticator: Operation = documented(
  async (request, deps) => {
    const { clientCert } = parseWith(extendVerifySchema, request.body ?? {});
    const certificate = firstCertificateOf(clientCert);
    if (!certificate) throw invalidField('clientCert', 'must be a PEM certificate', clientCert.slice(0, 64));
    await withOptimisticRetry(async () => {
      const stored = await ownAuthenticator(request, deps);
      const authenticator = stored.doc;
      requireExtendable(authenticator);
      requirePresentedCertificate(request, deps, [authenticator.fingerprint, authenticator.unverifiedFingerprint]);
      if (!authenticator.unverifiedFingerprint || authenticator.unverifiedFingerprint !== fingerprintOf(certificate)) {
        throw invalidField(
          'clientCert',
          'is not the certificate the last extension issued',
          fingerprintOf(certificate),
        );
      }
      const now = deps.now().toISOString();
      const next: Authenticator = {
        ...authenticator,
        certPem: authenticator.unverifiedCertPem ?? certificate.toString(),
        fingerprint: authenticator.unverifiedFingerprint,
        unverifiedCertPem: null,
        unverifiedFingerprint: null,
        isExtendRequested: false,
        isKeyRollRequested: false,
        certIssuedAt: now,
        updatedAt: now,
      };
      await deps.store.transact(deps.store.replaceOps(authenticators, stored, next));
    });
    request.logger.info('certificate extension verified', { authenticatorId: request.pathParameters.id });
    return empty();
  },
  { body: extendVerifySchema },
);

export const authenticatorLifecycleOperations: Record<string, Operation> = {
  reEnrollAuthenticator,
  requestExtendAuthenticator,
  extendCurrentIdentityAuthenticator,
  extendVerifyCurrentIdentityAuthenticator,
};
