import { edgeRouterPolicies } from '#shared/entities/policies.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { optionalRoles, policyApi, policySchemas } from './policy-fields.ts';

export const edgeRouterPolicyApi = policyApi({
  def: edgeRouterPolicies,
  schemas: policySchemas({ identityRoles: optionalRoles, edgeRouterRoles: optionalRoles }),
  roleFields: ['identityRoles', 'edgeRouterRoles'],
  createdWith: { isSystem: false },
  // The system policies tie a tunneling router's own identity to it; they come and go with the router.
  guard: (stored, action) => {
    if (!stored.isSystem) return;
    throw new ApiError(action === 'delete' ? 'ENTITY_CAN_NOT_BE_DELETED' : 'ENTITY_CAN_NOT_BE_UPDATED');
  },
});
