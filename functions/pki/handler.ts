import { defaultDeps } from '#functions/create-deps.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { lazyS3Truststore } from '#shared/pki/create-truststore.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { apiSessionCertificateOperations } from './api-session-certificates.ts';
import { authenticatorLifecycleOperations } from './authenticator-lifecycle.ts';
import { caOperations } from './ca-operations.ts';
import { enroll } from './enroll.ts';
import { enrollOtt } from './enroll-ott.ts';
import { enrollErOtt, extendRouterEnrollment } from './enroll-router.ts';
import { enrollToken } from './enroll-token.ts';
import { enrollUpdb } from './enroll-updb.ts';
import { enrollCa, enrollOttCa } from './enroll-with-certificate.ts';
import { enrollmentOperations } from './enrollment-operations.ts';
import { enrollmentChallenge, getEnrollmentJwks, listNetworkJWTs, listWellKnownCas } from './public-pki.ts';
import { revocationOperations } from './revocation-operations.ts';

export const operations: OperationMap = {
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
  ...authenticatorLifecycleOperations,
  ...apiSessionCertificateOperations,
  ...caOperations,
  ...enrollmentOperations,
  ...revocationOperations,
};

let cached: Deps | undefined;

/** The group's deps: the shared ones, with the S3 truststore of the mTLS domain when the stack gives one. */
function pkiDeps(): Deps {
  if (!cached) {
    const deps = defaultDeps();
    const truststore = deps.config.truststore;
    cached = truststore ? { ...deps, truststore: lazyS3Truststore(truststore, deps.config.region) } : deps;
  }
  return cached;
}

export const handler = createGroupHandler('pki', operations, pkiDeps);
