import type { Route } from '../route.ts';
import { CLIENT, MANAGEMENT, route } from '../route-builder.ts';

/** Config types, configs, services and terminators. */
export const SERVICES_ROUTES: readonly Route[] = [
  // Config types.
  route('GET', '/config-types', MANAGEMENT, 'services', 'admin', 'listConfigTypes'),
  route('POST', '/config-types', MANAGEMENT, 'services', 'admin', 'createConfigType'),
  route('GET', '/config-types/{id}', MANAGEMENT, 'services', 'admin', 'detailConfigType'),
  route('PUT', '/config-types/{id}', MANAGEMENT, 'services', 'admin', 'updateConfigType'),
  route('PATCH', '/config-types/{id}', MANAGEMENT, 'services', 'admin', 'patchConfigType'),
  route('DELETE', '/config-types/{id}', MANAGEMENT, 'services', 'admin', 'deleteConfigType'),
  route('GET', '/config-types/{id}/configs', MANAGEMENT, 'services', 'admin', 'listConfigsForConfigType'),

  // Configs.
  route('GET', '/configs', MANAGEMENT, 'services', 'admin', 'listConfigs'),
  route('POST', '/configs', MANAGEMENT, 'services', 'admin', 'createConfig'),
  route('GET', '/configs/{id}', MANAGEMENT, 'services', 'admin', 'detailConfig'),
  route('PUT', '/configs/{id}', MANAGEMENT, 'services', 'admin', 'updateConfig'),
  route('PATCH', '/configs/{id}', MANAGEMENT, 'services', 'admin', 'patchConfig'),
  route('DELETE', '/configs/{id}', MANAGEMENT, 'services', 'admin', 'deleteConfig'),
  route('GET', '/configs/{id}/services', MANAGEMENT, 'services', 'admin', 'listConfigServices'),

  // Services (management).
  route('GET', '/services', MANAGEMENT, 'services', 'admin', 'listServices'),
  route('POST', '/services', MANAGEMENT, 'services', 'admin', 'createService'),
  route('GET', '/services/{id}', MANAGEMENT, 'services', 'admin', 'detailService'),
  route('PUT', '/services/{id}', MANAGEMENT, 'services', 'admin', 'updateService'),
  route('PATCH', '/services/{id}', MANAGEMENT, 'services', 'admin', 'patchService'),
  route('DELETE', '/services/{id}', MANAGEMENT, 'services', 'admin', 'deleteService'),
  // The client API lists the same three writes, for admins only, as the management API has them.
  route('PUT', '/services/{id}', CLIENT, 'services', 'admin', 'updateService'),
  route('PATCH', '/services/{id}', CLIENT, 'services', 'admin', 'patchService'),
  route('DELETE', '/services/{id}', CLIENT, 'services', 'admin', 'deleteService'),
  route('GET', '/services/{id}/configs', MANAGEMENT, 'services', 'admin', 'listServiceConfig'),
  route('GET', '/service-role-attributes', MANAGEMENT, 'services', 'admin', 'listServiceRoleAttributes'),
];
