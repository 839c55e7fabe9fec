import { sessionEndingDeps } from '#functions/create-deps.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { loadedOnUse, type OperationMap } from '#shared/http/operation.ts';
import { lazyS3Truststore } from '#shared/pki/create-truststore.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { PKI_ROUTES } from '#shared/routes/groups/pki-routes.ts';
import { enroll } from './enroll.ts';
import { enrollOtt } from './enroll-ott.ts';
import { enrollErOtt, extendRouterEnrollment } from './enroll-router.ts';
import { enrollToken } from './enroll-token.ts';
import { enrollUpdb } from './enroll-updb.ts';
import { enrollCa, enrollOttCa } from './enroll-with-certificate.ts';
import { enrollmentChallenge, getEnrollmentJwks, listNetworkJWTs, listWellKnownCas } from './public-pki.ts';

/** Enrollment and the public PKI documents: what SDKs and routers call, loaded with the function. */
const enrollmentPath: OperationMap = {
  listWellKnownCas,
  getEnrollmentJwks,
  enrollmentChallenge,
  listNetworkJWTs,
  enroll,
  enrollOtt,
  enrollOttCa,
  enrollUpdb,
  enrollCa,
  enrollErOtt,
  extendRouterEnrollment,
  enrollToken,
};

/**
 * The admin's operations (CAs, enrollments, revocations, authenticator lifecycle) and API session certificates:
 * loaded with the first request to any of them, so an enrollment's cold start does not read them.
 */
const adminOperations = loadedOnUse(
  PKI_ROUTES.filter((route) => !(route.operation in enrollmentPath)).map((route) => route.operation),
  async () => {
    const modules = await Promise.all([
      import('./authenticator-lifecycle.ts'),
      import('./api-session-certificates.ts'),
      import('./ca-operations.ts'),
      import('./enrollment-operations.ts'),
      import('./revocation-operations.ts'),
    ]);
    const [lifecycle, apiSessionCertificates, cas, enrollments, revocations] = modules;
    return {
      ...lifecycle.authenticatorLifecycleOperations,
      ...apiSessionCertificates.apiSessionCertificateOperations,
      ...cas.caOperations,
      ...enrollments.enrollmentOperations,
      ...revocations.revocationOperations,
    };
  },
);

export const operations: OperationMap = { ...enrollmentPath, ...adminOperations };

let cached: Deps | undefined;

/** The group's deps: the shared ones, with the S3 truststore of the mTLS domain when the stack gives one. */
function pkiDeps(): Deps {
  if (!cached) {
    const deps = sessionEndingDeps();
    const truststore = deps.config.truststore;
    cached = truststore ? { ...deps, truststore: lazyS3Truststore(truststore, deps.config.region) } : deps;
  }
  return cached;
}

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = PKI_ROUTES;

export const handler = createGroupHandler('pki', routes, operations, pkiDeps);
