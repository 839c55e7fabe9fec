import { crudOperations, getOrNotFound } from '#shared/crud/crud-operations.ts';
import { cas } from '#shared/entities/ca.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { empty } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { isSignedByCa } from '#shared/pki/ca-trust.ts';
import { certificatesOf, commonNameOf, PemError } from '#shared/pki/certificates.ts';
import { issuerBaseUrl, signCaJwt } from '#shared/pki/enrollment-jwt.ts';
import { refreshTruststore } from '#shared/pki/trusted-cas.ts';
import { RecentMap } from '#shared/recent-map.ts';
import { CAS } from '#shared/routes/groups/pki-routes.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import { caApi } from './ca-api.ts';

/** The certificate a verify request carries, or the reference's 400 for what it is instead. */
function verificationCertificate(body: string | undefined) {
  try {
    const [certificate] = certificatesOf(body ?? '');
    return certificate!;
  } catch (error) {
    if (error instanceof PemError && error.kind === 'not-certificate') throw new ApiError('EXPECTED_PEM_CERTIFICATE');
    throw new ApiError('COULD_NOT_PARSE_BODY', { message: 'The body must be a PEM certificate (text/plain).' });
  }
}

/**
 * `POST /cas/{id}/verify` (`text/plain` PEM): proof that the registrant holds the CA's key, a certificate signed by
 * the CA's own certificate (the first of its PEM, never another of the bundle) whose common name is the CA's
 * verification token. Verified CAs join the mTLS truststore.
 */
const verifyCa: Operation = async (request, deps) => {
  const id = request.pathParameters.id ?? '';
  await withOptimisticRetry(async () => {
    const stored = await getOrNotFound(deps, cas, id);
    const ca = stored.doc;
    if (ca.isVerified) throw new ApiError('CA_ALREADY_VERIFIED');
    const certificate = verificationCertificate(request.rawBody);
    if (commonNameOf(certificate) !== ca.verificationToken) {
      throw new ApiError('INVALID_COMMON_NAME', {
        cause: { field: 'commonName', reason: 'must be the CA verification token', value: commonNameOf(certificate) },
      });
    }
    if (!isSignedByCa(certificate, ca)) throw new ApiError('CERTIFICATE_FAILED_VALIDATION');
    const now = deps.now().toISOString();
    await deps.store.transact(deps.store.replaceOps(cas, stored, { ...ca, isVerified: true, updatedAt: now }));
  });
  await refreshTruststore(deps);
  request.logger.info('CA verified', { id });
  return empty();
};

/** CA JWTs never expire and name only the CA: one signature per CA and origin per process (bounded). */
const MAX_CACHED_CA_JWTS = 256;
const caJwts = new RecentMap<string, Promise<string>>(MAX_CACHED_CA_JWTS);

/** `GET /cas/{id}/jwt`: the CA's auto-enrollment JWT, as `application/jwt` text. */
const getCaJwt: Operation = async (request, deps) => {
  const ca = (await getOrNotFound(deps, cas, request.pathParameters.id ?? '')).doc;
  const key = `${ca.id}\n${request.baseUrl}`;
  let jwt = caJwts.get(key);
  if (!jwt) {
    jwt = signCaJwt(deps.signers.server, issuerBaseUrl('ca', request.baseUrl, deps.config), ca.id);
    jwt.catch(() => caJwts.delete(key));
    caJwts.set(key, jwt);
  }
  return { statusCode: 200, body: await jwt, headers: { 'content-type': 'application/jwt' } };
};

export const caOperations: Record<string, Operation> = { ...crudOperations(CAS, caApi), verifyCa, getCaJwt };
