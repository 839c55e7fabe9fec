import { crudResource, crudRoutes } from '../crud-resource.ts';
import type { Route } from '../route.ts';
import { CLIENT, MANAGEMENT, route } from '../route-builder.ts';

export const CONFIG_TYPES = crudResource('services', '/config-types', 'ConfigType', 'ConfigTypes');
export const CONFIGS = crudResource('services', '/configs', 'Config', 'Configs');
export const SERVICES = crudResource('services', '/services', 'Service', 'Services');

/** Config types, configs, services and terminators. */
export const SERVICES_ROUTES: readonly Route[] = [
  ...crudRoutes(CONFIG_TYPES),
  route('GET', '/config-types/{id}/configs', MANAGEMENT, 'services', 'admin', 'listConfigsForConfigType'),
  ...crudRoutes(CONFIGS),
  route('GET', '/configs/{id}/services', MANAGEMENT, 'services', 'admin', 'listConfigServices'),
  ...crudRoutes(SERVICES),
  // The client API lists the same three writes, for admins only, as the management API has them.
  ...crudRoutes(SERVICES, { actions: ['replace', 'patch', 'delete'], apis: CLIENT }),
  route('GET', '/services/{id}/configs', MANAGEMENT, 'services', 'admin', 'listServiceConfig'),
  route('GET', '/service-role-attributes', MANAGEMENT, 'services', 'admin', 'listServiceRoleAttributes'),
];
