import type { BaseDocument, EntityDefinition } from '#shared/entities/entity-definition.ts';
import { edgeRouterPolicies, serviceEdgeRouterPolicies, servicePolicies } from '#shared/entities/policies.ts';
import type { PolicySemantic } from '#shared/entities/policy-semantics.ts';
import type { Operation } from '#shared/http/operation.ts';
import { RoleResolver } from '#shared/policy/reach.ts';
import { parseRoles } from '#shared/policy/roles.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { type EntityViews, type Members, relatedList } from './entity-page.ts';
import { EDGE_ROUTER_VIEWS, IDENTITY_VIEWS, POSTURE_CHECK_VIEWS, SERVICE_VIEWS } from './entity-views.ts';

/** A policy as its member lists read it: the semantic its role fields combine under. */
type Policy = BaseDocument & { readonly semantic: PolicySemantic };

/**
 * The entities one role field of a policy selects. `#all` is every entity of the type, which the list pages from the
 * type's own order without reading its ids; otherwise the role-attribute index and the named ids, one parallel wave.
 */
async function selected(deps: Deps, roles: readonly string[], semantic: PolicySemantic, collection: string) {
  if (parseRoles(roles).all) return 'all' satisfies Members;
  return new RoleResolver(deps.store).ids(collection, { roles, semantic });
}

/** `GET /<policies>/{id}/<members>`: the entities the policy's `field` selects, as their management list shows them. */
function policyMembers<P extends Policy, D extends BaseDocument>(
  policies: EntityDefinition<P>,
  field: keyof P & string,
  views: EntityViews<D>,
): Operation {
  return relatedList(policies, views, (deps, policy) =>
    selected(deps, policy[field] as readonly string[], policy.semantic, views.def.collection),
  );
}

/** The member lists of the three policy kinds, by operation name. */
export const policyListOperations: Record<string, Operation> = {
  listServicePolicyIdentities: policyMembers(servicePolicies, 'identityRoles', IDENTITY_VIEWS),
  listServicePolicyServices: policyMembers(servicePolicies, 'serviceRoles', SERVICE_VIEWS),
  listServicePolicyPostureChecks: policyMembers(servicePolicies, 'postureCheckRoles', POSTURE_CHECK_VIEWS),
  listEdgeRouterPolicyEdgeRouters: policyMembers(edgeRouterPolicies, 'edgeRouterRoles', EDGE_ROUTER_VIEWS),
  listEdgeRouterPolicyIdentities: policyMembers(edgeRouterPolicies, 'identityRoles', IDENTITY_VIEWS),
  listServiceEdgeRouterPolicyEdgeRouters: policyMembers(
    serviceEdgeRouterPolicies,
    'edgeRouterRoles',
    EDGE_ROUTER_VIEWS,
  ),
  listServiceEdgeRouterPolicyServices: policyMembers(serviceEdgeRouterPolicies, 'serviceRoles', SERVICE_VIEWS),
};
