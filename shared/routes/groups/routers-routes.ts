import type { Route } from '../route.ts';
import { MANAGEMENT, route } from '../route-builder.ts';

const crud = (collection: string, singular: string, plural: string): Route[] => [
  route('GET', `/${collection}`, MANAGEMENT, 'routers', 'admin', `list${plural}`),
  route('POST', `/${collection}`, MANAGEMENT, 'routers', 'admin', `create${singular}`),
  route('GET', `/${collection}/{id}`, MANAGEMENT, 'routers', 'admin', `detail${singular}`),
  route('PUT', `/${collection}/{id}`, MANAGEMENT, 'routers', 'admin', `update${singular}`),
  route('PATCH', `/${collection}/{id}`, MANAGEMENT, 'routers', 'admin', `patch${singular}`),
  route('DELETE', `/${collection}/{id}`, MANAGEMENT, 'routers', 'admin', `delete${singular}`),
];

/** Edge routers, transit routers (under both of their names) and terminators (management). */
export const ROUTERS_ROUTES: readonly Route[] = [
  ...crud('edge-routers', 'EdgeRouter', 'EdgeRouters'),
  route('POST', '/edge-routers/{id}/re-enroll', MANAGEMENT, 'routers', 'admin', 'reEnrollEdgeRouter'),
  route('GET', '/edge-router-role-attributes', MANAGEMENT, 'routers', 'admin', 'listEdgeRouterRoleAttributes'),
  ...crud('transit-routers', 'TransitRouter', 'TransitRouters'),
  ...crud('routers', 'Router', 'Routers'),
  ...crud('terminators', 'Terminator', 'Terminators'),
  route('GET', '/services/{id}/terminators', MANAGEMENT, 'routers', 'admin', 'listServiceTerminators'),
];
