import type { Route } from '../route.ts';
import { BOTH, MANAGEMENT, route } from '../route-builder.ts';

/** The caller's own identity, and identities as admins manage them. */
export const IDENTITY_ROUTES: readonly Route[] = [
  // The caller's own identity.
  route('GET', '/current-identity', BOTH, 'identities', 'authenticated', 'getCurrentIdentity'),

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
  route('GET', '/identities/{id}/service-configs', MANAGEMENT, 'identities', 'admin', 'listIdentitysServiceConfigs'),
  route(
    'POST',
    '/identities/{id}/service-configs',
    MANAGEMENT,
    'identities',
    'admin',
    'associateIdentitysServiceConfigs',
  ),
  route(
    'DELETE',
    '/identities/{id}/service-configs',
    MANAGEMENT,
    'identities',
    'admin',
    'disassociateIdentitysServiceConfigs',
  ),
  route('DELETE', '/identities/{id}/mfa', MANAGEMENT, 'identities', 'admin', 'removeIdentityMfa'),
  route('PUT', '/identities/{id}/trace', MANAGEMENT, 'identities', 'admin', 'updateIdentityTracing'),
  route('GET', '/identity-types', MANAGEMENT, 'identities', 'admin', 'listIdentityTypes'),
  route('GET', '/identity-types/{id}', MANAGEMENT, 'identities', 'admin', 'detailIdentityType'),
  route('GET', '/identity-role-attributes', MANAGEMENT, 'identities', 'admin', 'listIdentityRoleAttributes'),
  route('GET', '/summary', MANAGEMENT, 'identities', 'admin', 'listSummary'),
];
