import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { enroll, enrollOtt } from './enroll-ott.ts';
import { enrollmentChallenge, getEnrollmentJwks, listNetworkJWTs, listWellKnownCas } from './public-pki.ts';

export const operations: OperationMap = {
  listWellKnownCas,
  getEnrollmentJwks,
  enrollmentChallenge,
  listNetworkJWTs,
  enroll,
  enrollOtt,
};

export const handler = createGroupHandler('pki', operations);
