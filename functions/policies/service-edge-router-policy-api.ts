import { serviceEdgeRouterPolicies } from '#shared/entities/policies.ts';
import { optionalRoles, policyApi, policySchemas } from './policy-fields.ts';

export const serviceEdgeRouterPolicyApi = policyApi({
  def: serviceEdgeRouterPolicies,
  schemas: policySchemas({ serviceRoles: optionalRoles, edgeRouterRoles: optionalRoles }),
  roleFields: ['serviceRoles', 'edgeRouterRoles'],
});
