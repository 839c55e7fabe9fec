import type { Route } from '../route.ts';
import { MANAGEMENT, route } from '../route-builder.ts';

/** The CRUD routes of one policy kind: `/service-policies`, `…/{id}`, named as the reference names them. */
function policyCrud(path: string, singular: string, plural: string): Route[] {
  return [
    route('GET', path, MANAGEMENT, 'policies', 'admin', `list${plural}`),
    route('POST', path, MANAGEMENT, 'policies', 'admin', `create${singular}`),
    route('GET', `${path}/{id}`, MANAGEMENT, 'policies', 'admin', `detail${singular}`),
    route('PUT', `${path}/{id}`, MANAGEMENT, 'policies', 'admin', `update${singular}`),
    route('PATCH', `${path}/{id}`, MANAGEMENT, 'policies', 'admin', `patch${singular}`),
    route('DELETE', `${path}/{id}`, MANAGEMENT, 'policies', 'admin', `delete${singular}`),
  ];
}

/** Service, edge-router and service-edge-router policies. */
export const POLICY_ROUTES: readonly Route[] = [
  ...policyCrud('/service-policies', 'ServicePolicy', 'ServicePolicies'),
  ...policyCrud('/edge-router-policies', 'EdgeRouterPolicy', 'EdgeRouterPolicies'),
  ...policyCrud('/service-edge-router-policies', 'ServiceEdgeRouterPolicy', 'ServiceEdgeRouterPolicies'),
];
