import { crudResource, crudRoutes } from '../crud-resource.ts';
import type { Route } from '../route.ts';
import { BOTH, CLIENT, MANAGEMENT, route } from '../route-builder.ts';

/** A client's ephemeral certificates, each under its API session. */
export const API_SESSION_CERTIFICATES = crudResource(
  'pki',
  '/current-api-session/certificates',
  'CurrentApiSessionCertificate',
  'CurrentApiSessionCertificates',
  { actions: ['list', 'create', 'detail', 'delete'], apis: CLIENT, auth: 'authenticated' },
);
export const CAS = crudResource('pki', '/cas', 'Ca', 'Cas');
export const ENROLLMENTS = crudResource('pki', '/enrollments', 'Enrollment', 'Enrollments', {
  actions: ['list', 'create', 'detail', 'delete'],
});
/** Revocations are written once (a second one of an id moves its time) and never deleted by hand. */
export const REVOCATIONS = crudResource('pki', '/revocations', 'Revocation', 'Revocations', {
  actions: ['list', 'create', 'detail'],
});

/**
 * The network's PKI (one function: it alone signs with the signing CA key): the public part a client that knows only
 * the controller's URL needs to trust it and enroll, every enrollment method, certificate extension and ephemeral
 * certificates, and the admin's CAs, enrollments and revocations.
 */
export const PKI_ROUTES: readonly Route[] = [
  route('GET', '/.well-known/est/cacerts', BOTH, 'pki', 'none', 'listWellKnownCas'),
  route('GET', '/network-jwts', BOTH, 'pki', 'none', 'listNetworkJWTs'),
  route('GET', '/enroll/jwks', CLIENT, 'pki', 'none', 'getEnrollmentJwks'),
  route('POST', '/enroll/challenge', CLIENT, 'pki', 'none', 'enrollmentChallenge'),
  route('POST', '/enroll', CLIENT, 'pki', 'none', 'enroll'),
  route('POST', '/enroll/ott', CLIENT, 'pki', 'none', 'enrollOtt'),
  route('POST', '/enroll/ottca', CLIENT, 'pki', 'none', 'enrollOttCa'),
  route('POST', '/enroll/updb', CLIENT, 'pki', 'none', 'enrollUpdb'),
  route('POST', '/enroll/ca', CLIENT, 'pki', 'none', 'enrollCa'),
  route('POST', '/enroll/erott', CLIENT, 'pki', 'none', 'enrollErOtt'),
  route('POST', '/enroll/token', CLIENT, 'pki', 'none', 'enrollToken'),
  route('POST', '/enroll/extend/router', CLIENT, 'pki', 'none', 'extendRouterEnrollment'),
  route(
    'POST',
    '/current-identity/authenticators/{id}/extend',
    BOTH,
    'pki',
    'authenticated',
    'extendCurrentIdentityAuthenticator',
  ),
  route(
    'POST',
    '/current-identity/authenticators/{id}/extend-verify',
    BOTH,
    'pki',
    'authenticated',
    'extendVerifyCurrentIdentityAuthenticator',
  ),
  ...crudRoutes(API_SESSION_CERTIFICATES),
  ...crudRoutes(CAS),
  route('GET', '/cas/{id}/jwt', MANAGEMENT, 'pki', 'admin', 'getCaJwt'),
  route('POST', '/cas/{id}/verify', MANAGEMENT, 'pki', 'admin', 'verifyCa'),
  ...crudRoutes(ENROLLMENTS),
  route('POST', '/enrollments/{id}/refresh', MANAGEMENT, 'pki', 'admin', 'refreshEnrollment'),
  route('POST', '/authenticators/{id}/re-enroll', MANAGEMENT, 'pki', 'admin', 'reEnrollAuthenticator'),
  route('POST', '/authenticators/{id}/request-extend', MANAGEMENT, 'pki', 'admin', 'requestExtendAuthenticator'),
  ...crudRoutes(REVOCATIONS),
];
