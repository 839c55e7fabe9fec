import { defaultDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import {
  EDGE_ROUTER_POLICIES,
  POLICY_ROUTES,
  SERVICE_EDGE_ROUTER_POLICIES,
  SERVICE_POLICIES,
} from '#shared/routes/groups/policy-routes.ts';
import { edgeRouterPolicyApi } from './edge-router-policy-api.ts';
import { getIdentityPolicyAdvice } from './policy-advice.ts';
import { policyListOperations } from './policy-lists.ts';
import { reachListOperations } from './reach-lists.ts';
import { serviceEdgeRouterPolicyApi } from './service-edge-router-policy-api.ts';
import { servicePolicyApi } from './service-policy-api.ts';

export const operations: OperationMap = {
  ...crudOperations(SERVICE_POLICIES, servicePolicyApi),
  ...crudOperations(EDGE_ROUTER_POLICIES, edgeRouterPolicyApi),
  ...crudOperations(SERVICE_EDGE_ROUTER_POLICIES, serviceEdgeRouterPolicyApi),
  ...policyListOperations,
  ...reachListOperations,
  getIdentityPolicyAdvice,
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = POLICY_ROUTES;

export const handler = createGroupHandler('policies', routes, operations, defaultDeps);
