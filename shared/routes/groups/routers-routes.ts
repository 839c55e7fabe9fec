import { crudResource, crudRoutes } from '../crud-resource.ts';
import type { Route } from '../route.ts';
import { MANAGEMENT, route } from '../route-builder.ts';

export const EDGE_ROUTERS = crudResource('routers', '/edge-routers', 'EdgeRouter', 'EdgeRouters');
/** Transit routers, under both of the reference's names for them. */
export const TRANSIT_ROUTERS = crudResource('routers', '/transit-routers', 'TransitRouter', 'TransitRouters');
export const ROUTERS = crudResource('routers', '/routers', 'Router', 'Routers');
export const TERMINATORS = crudResource('routers', '/terminators', 'Terminator', 'Terminators');

/** Edge routers, transit routers (under both of their names) and terminators (management). */
export const ROUTERS_ROUTES: readonly Route[] = [
  ...crudRoutes(EDGE_ROUTERS),
  route('POST', '/edge-routers/{id}/re-enroll', MANAGEMENT, 'routers', 'admin', 'reEnrollEdgeRouter'),
  route('GET', '/edge-router-role-attributes', MANAGEMENT, 'routers', 'admin', 'listEdgeRouterRoleAttributes'),
  ...crudRoutes(TRANSIT_ROUTERS),
  ...crudRoutes(ROUTERS),
  ...crudRoutes(TERMINATORS),
  route('GET', '/services/{id}/terminators', MANAGEMENT, 'routers', 'admin', 'listServiceTerminators'),
];
