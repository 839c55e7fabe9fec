import { apiSessionCertificates } from './api-session-certificate.ts';
import { authPolicies } from './auth-policy.ts';
import { authenticators } from './authenticator.ts';
import { cas } from './ca.ts';
import { enrollments } from './enrollment.ts';
import type { BaseDocument, EntityDefinition } from './entity-definition.ts';
import { identities } from './identity.ts';
import { identityServiceConfigs } from './identity-service-config.ts';
import { identityTypes } from './identity-type.ts';
import { mfas } from './mfa.ts';
import { POLICY_DEFINITIONS } from './policies.ts';
import { POSTURE_CHECK_DEFINITIONS } from './posture-check-definitions.ts';
import { revocations } from './revocation.ts';
import { ROUTER_DEFINITIONS } from './router-definitions.ts';
import { SERVICE_DEFINITIONS } from './service-definitions.ts';
import { sessions } from './session.ts';
import { SIGNER_DEFINITIONS } from './signer-definitions.ts';

/**
 * Every entity type the kit stores. Deletes read it to find the declarations of cascading children from their link
 * items, and the integrity scan walks it; a new type is added here.
 */
export const ENTITY_DEFINITIONS: readonly EntityDefinition<BaseDocument>[] = [
  ...([
    identityTypes,
    authPolicies,
    cas,
    identities,
    authenticators,
    enrollments,
    mfas,
    revocations,
  ] as unknown as EntityDefinition<BaseDocument>[]),
  ...SIGNER_DEFINITIONS,
  ...SERVICE_DEFINITIONS,
  ...ROUTER_DEFINITIONS,
  ...POSTURE_CHECK_DEFINITIONS,
  ...POLICY_DEFINITIONS,
  identityServiceConfigs as unknown as EntityDefinition<BaseDocument>,
  sessions as unknown as EntityDefinition<BaseDocument>,
  apiSessionCertificates as unknown as EntityDefinition<BaseDocument>,
];

export function definitionOf(collection: string): EntityDefinition<BaseDocument> | undefined {
  return ENTITY_DEFINITIONS.find((def) => def.collection === collection);
}
