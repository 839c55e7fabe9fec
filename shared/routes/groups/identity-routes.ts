import { crudResource, crudRoutes } from '../crud-resource.ts';
import type { Route } from '../route.ts';
import { BOTH, MANAGEMENT, route } from '../route-builder.ts';

export const IDENTITIES = crudResource('identities', '/identities', 'Identity', 'Identities');
/** Seeded and read-only. */
export const IDENTITY_TYPES = crudResource('identities', '/identity-types', 'IdentityType', 'IdentityTypes', {
  actions: ['list', 'detail'],
});

/** The caller's own identity, and identities as admins manage them. */
export const IDENTITY_ROUTES: readonly Route[] = [
  // The caller's own identity.
  route('GET', '/current-identity', BOTH, 'identities', 'authenticated', 'getCurrentIdentity'),

  // Identities (management).
  ...crudRoutes(IDENTITIES),
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
  ...crudRoutes(IDENTITY_TYPES),
  route('GET', '/identity-role-attributes', MANAGEMENT, 'identities', 'admin', 'listIdentityRoleAttributes'),
  route('GET', '/summary', MANAGEMENT, 'identities', 'admin', 'listSummary'),
];
