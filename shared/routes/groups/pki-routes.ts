import type { Route } from '../route.ts';
import { BOTH, CLIENT, route } from '../route-builder.ts';

/** The network's public PKI: what a client that knows only the controller's URL needs to trust it and enroll. */
export const PKI_ROUTES: readonly Route[] = [
  route('GET', '/.well-known/est/cacerts', BOTH, 'pki', 'none', 'listWellKnownCas'),
  route('GET', '/network-jwts', BOTH, 'pki', 'none', 'listNetworkJWTs'),
  route('GET', '/enroll/jwks', CLIENT, 'pki', 'none', 'getEnrollmentJwks'),
  route('POST', '/enroll/challenge', CLIENT, 'pki', 'none', 'enrollmentChallenge'),
  route('POST', '/enroll', CLIENT, 'pki', 'none', 'enroll'),
  route('POST', '/enroll/ott', CLIENT, 'pki', 'none', 'enrollOtt'),
];
