import type { Api, AuthLevel, HttpMethod, OperationGroup, Route } from './route.ts';

const BOTH: readonly Api[] = ['client', 'management'];
const MANAGEMENT: readonly Api[] = ['management'];

function route(
  method: HttpMethod,
  path: string,
  apis: readonly Api[],
  group: OperationGroup,
  auth: AuthLevel,
  operation: string,
): Route {
  return { method, path, apis, group, auth, operation };
}

/**
 * Every operation the controller serves. The CDK app builds API Gateway's resources and methods from this table and
 * the local server dispatches with it, so the two can never disagree.
 */
export const ROUTES: readonly Route[] = [
  // Version and capabilities.
  route('GET', '/', BOTH, 'info', 'none', 'listRoot'),
  route('GET', '/version', BOTH, 'info', 'none', 'listVersion'),
  route('GET', '/enumerated-capabilities', BOTH, 'info', 'none', 'listEnumeratedCapabilities'),

  // Authentication and the caller's own API session.
  route('POST', '/authenticate', BOTH, 'authentication', 'none', 'authenticate'),
  route('GET', '/current-api-session', BOTH, 'authentication', 'partial', 'getCurrentAPISession'),
  route('DELETE', '/current-api-session', BOTH, 'authentication', 'partial', 'deleteCurrentApiSession'),

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
  route('GET', '/authenticators', MANAGEMENT, 'authentication', 'admin', 'listAuthenticators'),
  route('POST', '/authenticators', MANAGEMENT, 'authentication', 'admin', 'createAuthenticator'),
  route('GET', '/authenticators/{id}', MANAGEMENT, 'authentication', 'admin', 'detailAuthenticator'),
  route('PUT', '/authenticators/{id}', MANAGEMENT, 'authentication', 'admin', 'updateAuthenticator'),
  route('PATCH', '/authenticators/{id}', MANAGEMENT, 'authentication', 'admin', 'patchAuthenticator'),
  route('DELETE', '/authenticators/{id}', MANAGEMENT, 'authentication', 'admin', 'deleteAuthenticator'),
  route('GET', '/api-sessions', MANAGEMENT, 'authentication', 'admin', 'listAPISessions'),
  route('GET', '/api-sessions/{id}', MANAGEMENT, 'authentication', 'admin', 'detailAPISessions'),
  route('DELETE', '/api-sessions/{id}', MANAGEMENT, 'authentication', 'admin', 'deleteAPISessions'),

  // The caller's own identity.
  route('GET', '/current-identity', BOTH, 'identities', 'authenticated', 'getCurrentIdentity'),

  // Auth policies (management).
  route('GET', '/auth-policies', MANAGEMENT, 'authentication', 'admin', 'listAuthPolicies'),
  route('POST', '/auth-policies', MANAGEMENT, 'authentication', 'admin', 'createAuthPolicy'),
  route('GET', '/auth-policies/{id}', MANAGEMENT, 'authentication', 'admin', 'detailAuthPolicy'),
  route('PUT', '/auth-policies/{id}', MANAGEMENT, 'authentication', 'admin', 'updateAuthPolicy'),
  route('PATCH', '/auth-policies/{id}', MANAGEMENT, 'authentication', 'admin', 'patchAuthPolicy'),
  route('DELETE', '/auth-policies/{id}', MANAGEMENT, 'authentication', 'admin', 'deleteAuthPolicy'),

  // Identities (management).
  route('GET', '/identities', MANAGEMENT, 'identities', 'admin', 'listIdentities'),
  route('POST', '/identities', MANAGEMENT, 'identities', 'admin', 'createIdentity'),
  route('GET', '/identities/{id}', MANAGEMENT, 'identities', 'admin', 'detailIdentity'),
  route('PUT', '/identities/{id}', MANAGEMENT, 'identities', 'admin', 'updateIdentity'),
  route('PATCH', '/identities/{id}', MANAGEMENT, 'identities', 'admin', 'patchIdentity'),
  route('DELETE', '/identities/{id}', MANAGEMENT, 'identities', 'admin', 'deleteIdentity'),
  route('POST', '/identities/{id}/disable', MANAGEMENT, 'identities', 'admin', 'disableIdentity'),
  route('POST', '/identities/{id}/enable', MANAGEMENT, 'identities', 'admin', 'enableIdentity'),
  route('GET', '/identities/{id}/authenticators', MANAGEMENT, 'identities', 'admin', 'getIdentityAuthenticators'),
  route('GET', '/identities/{id}/enrollments', MANAGEMENT, 'identities', 'admin', 'getIdentityEnrollments'),
  route('GET', '/identity-types', MANAGEMENT, 'identities', 'admin', 'listIdentityTypes'),
  route('GET', '/identity-types/{id}', MANAGEMENT, 'identities', 'admin', 'detailIdentityType'),
  route('GET', '/identity-role-attributes', MANAGEMENT, 'identities', 'admin', 'listIdentityRoleAttributes'),
  route('GET', '/summary', MANAGEMENT, 'identities', 'admin', 'listSummary'),
];
