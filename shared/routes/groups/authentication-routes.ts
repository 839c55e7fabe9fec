import { crudResource, crudRoutes } from '../crud-resource.ts';
import type { Route } from '../route.ts';
import { BOTH, MANAGEMENT, route } from '../route-builder.ts';

export const AUTHENTICATORS = crudResource('authentication', '/authenticators', 'Authenticator', 'Authenticators');
export const AUTH_POLICIES = crudResource('authentication', '/auth-policies', 'AuthPolicy', 'AuthPolicies');

/** Logins, API sessions, authenticators and auth policies. */
export const AUTHENTICATION_ROUTES: readonly Route[] = [
  // Authentication (the caller's own API session is `POLL_ROUTES`').
  route('POST', '/authenticate', BOTH, 'authentication', 'none', 'authenticate'),

  // TOTP MFA: a partial session may enroll, verify and give its code; the rest needs the second factor given.
  route('POST', '/authenticate/mfa', BOTH, 'authentication', 'partial', 'authenticateMfa'),
  route('GET', '/current-identity/mfa', BOTH, 'authentication', 'partial', 'detailMfa'),
  route('POST', '/current-identity/mfa', BOTH, 'authentication', 'partial', 'enrollMfa'),
  route('DELETE', '/current-identity/mfa', BOTH, 'authentication', 'authenticated', 'deleteMfa'),
  route('GET', '/current-identity/mfa/qr-code', BOTH, 'authentication', 'partial', 'detailMfaQrCode'),
  route('POST', '/current-identity/mfa/verify', BOTH, 'authentication', 'partial', 'verifyMfa'),
  route(
    'GET',
    '/current-identity/mfa/recovery-codes',
    BOTH,
    'authentication',
    'authenticated',
    'detailMfaRecoveryCodes',
  ),
  route(
    'POST',
    '/current-identity/mfa/recovery-codes',
    BOTH,
    'authentication',
    'authenticated',
    'createMfaRecoveryCodes',
  ),
  route('POST', '/current-api-session/totp-token', BOTH, 'authentication', 'authenticated', 'createTotpToken'),

  // The caller's own authenticators (self-service username and password changes).
  route(
    'GET',
    '/current-identity/authenticators',
    BOTH,
    'authentication',
    'authenticated',
    'listCurrentIdentityAuthenticators',
  ),
  route(
    'GET',
    '/current-identity/authenticators/{id}',
    BOTH,
    'authentication',
    'authenticated',
    'detailCurrentIdentityAuthenticator',
  ),
  route(
    'PUT',
    '/current-identity/authenticators/{id}',
    BOTH,
    'authentication',
    'authenticated',
    'updateCurrentIdentityAuthenticator',
  ),
  route(
    'PATCH',
    '/current-identity/authenticators/{id}',
    BOTH,
    'authentication',
    'authenticated',
    'patchCurrentIdentityAuthenticator',
  ),

  // Authenticators and API sessions (management).
  ...crudRoutes(AUTHENTICATORS),
  route('GET', '/api-sessions', MANAGEMENT, 'authentication', 'admin', 'listAPISessions'),
  route('GET', '/api-sessions/{id}', MANAGEMENT, 'authentication', 'admin', 'detailAPISessions'),
  route('DELETE', '/api-sessions/{id}', MANAGEMENT, 'authentication', 'admin', 'deleteAPISessions'),

  // Auth policies (management).
  ...crudRoutes(AUTH_POLICIES),
];
