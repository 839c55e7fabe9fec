import { defaultDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { edgeRouterPolicyApi } from './edge-router-policy-api.ts';
import { getIdentityPolicyAdvice } from './policy-advice.ts';
import { policyListOperations } from './policy-lists.ts';
import { reachListOperations } from './reach-lists.ts';
import { serviceEdgeRouterPolicyApi } from './service-edge-router-policy-api.ts';
import { servicePolicyApi } from './service-policy-api.ts';

/** The CRUD operation names of a policy kind, as `policyCrud` in the route table names them. */
function crudNames(singular: string, plural: string) {
  return {
    list: `list${plural}`,
    create: `create${singular}`,
    detail: `detail${singular}`,
    replace: `update${singular}`,
    patch: `patch${singular}`,
    delete: `delete${singular}`,
  };
}

export const operations: OperationMap = {
  ...crudOperations(servicePolicyApi, crudNames('ServicePolicy', 'ServicePolicies')),
  ...crudOperations(edgeRouterPolicyApi, crudNames('EdgeRouterPolicy', 'EdgeRouterPolicies')),
  ...crudOperations(serviceEdgeRouterPolicyApi, crudNames('ServiceEdgeRouterPolicy', 'ServiceEdgeRouterPolicies')),
  ...policyListOperations,
  ...reachListOperations,
  getIdentityPolicyAdvice,
};

export const handler = createGroupHandler('policies', operations, defaultDeps);
