import { crudResource, crudRoutes } from '../crud-resource.ts';
import type { Route } from '../route.ts';
import { MANAGEMENT, route } from '../route-builder.ts';

export const SERVICE_POLICIES = crudResource('policies', '/service-policies', 'ServicePolicy', 'ServicePolicies');
export const EDGE_ROUTER_POLICIES = crudResource(
  'policies',
  '/edge-router-policies',
  'EdgeRouterPolicy',
  'EdgeRouterPolicies',
);
export const SERVICE_EDGE_ROUTER_POLICIES = crudResource(
  'policies',
  '/service-edge-router-policies',
  'ServiceEdgeRouterPolicy',
  'ServiceEdgeRouterPolicies',
);

/** A management read answered from the policies (`GET <path>`, admin only). */
function policyRoute(path: string, operation: string): Route {
  return route('GET', path, MANAGEMENT, 'policies', 'admin', operation);
}

/**
 * Service, edge-router and service-edge-router policies; the entities each selects; and "who can reach what": the
 * services, edge routers and policies of an identity, service or edge router, and the policy advice for an identity
 * and a service.
 */
export const POLICY_ROUTES: readonly Route[] = [
  ...crudRoutes(SERVICE_POLICIES),
  ...crudRoutes(EDGE_ROUTER_POLICIES),
  ...crudRoutes(SERVICE_EDGE_ROUTER_POLICIES),

  policyRoute('/service-policies/{id}/identities', 'listServicePolicyIdentities'),
  policyRoute('/service-policies/{id}/services', 'listServicePolicyServices'),
  policyRoute('/service-policies/{id}/posture-checks', 'listServicePolicyPostureChecks'),
  policyRoute('/edge-router-policies/{id}/edge-routers', 'listEdgeRouterPolicyEdgeRouters'),
  policyRoute('/edge-router-policies/{id}/identities', 'listEdgeRouterPolicyIdentities'),
  policyRoute('/service-edge-router-policies/{id}/edge-routers', 'listServiceEdgeRouterPolicyEdgeRouters'),
  policyRoute('/service-edge-router-policies/{id}/services', 'listServiceEdgeRouterPolicyServices'),

  policyRoute('/identities/{id}/services', 'listIdentityServices'),
  policyRoute('/identities/{id}/service-policies', 'listIdentityServicePolicies'),
  policyRoute('/identities/{id}/edge-routers', 'listIdentityEdgeRouters'),
  policyRoute('/identities/{id}/edge-router-policies', 'listIdentitysEdgeRouterPolicies'),
  policyRoute('/identities/{id}/policy-advice/{serviceId}', 'getIdentityPolicyAdvice'),
  policyRoute('/services/{id}/identities', 'listServiceIdentities'),
  policyRoute('/services/{id}/service-policies', 'listServiceServicePolicies'),
  policyRoute('/services/{id}/edge-routers', 'listServiceEdgeRouters'),
  policyRoute('/services/{id}/service-edge-router-policies', 'listServiceServiceEdgeRouterPolicies'),
  policyRoute('/edge-routers/{id}/identities', 'listEdgeRouterIdentities'),
  policyRoute('/edge-routers/{id}/services', 'listEdgeRouterServices'),
  policyRoute('/edge-routers/{id}/edge-router-policies', 'listEdgeRouterEdgeRouterPolicies'),
  policyRoute('/edge-routers/{id}/service-edge-router-policies', 'listEdgeRouterServiceEdgeRouterPolicies'),
];
