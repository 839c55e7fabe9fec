import type { Route } from '../route.ts';
import { BOTH, CLIENT, MANAGEMENT, route } from '../route-builder.ts';

/** This deployment as controllers, its API specs and its controller settings (served by the info group). */
export const CONTROLLER_ROUTES: readonly Route[] = [
  // On the client API any session may list the controllers; the management API is for admins.
  route('GET', '/controllers', CLIENT, 'info', 'authenticated', 'listControllers'),
  route('GET', '/controllers', MANAGEMENT, 'info', 'admin', 'listControllers'),

  // Our own OpenAPI documents (shared/openapi/), open to anyone as the reference's are.
  route('GET', '/specs', BOTH, 'info', 'none', 'listSpecs'),
  route('GET', '/specs/{id}', BOTH, 'info', 'none', 'detailSpec'),
  route('GET', '/specs/{id}/spec', BOTH, 'info', 'none', 'detailSpecBody'),

  // Controller settings (management): per controller and `global`.
  route('GET', '/controller-settings', MANAGEMENT, 'info', 'admin', 'listControllerSettings'),
  route('POST', '/controller-settings', MANAGEMENT, 'info', 'admin', 'createControllerSetting'),
  route('GET', '/controller-settings/{id}', MANAGEMENT, 'info', 'admin', 'detailControllerSetting'),
  route('GET', '/controller-settings/{id}/effective', MANAGEMENT, 'info', 'admin', 'detailControllerSettingEffective'),
  route('PUT', '/controller-settings/{id}/effective', MANAGEMENT, 'info', 'admin', 'updateControllerSetting'),
  route('PATCH', '/controller-settings/{id}/effective', MANAGEMENT, 'info', 'admin', 'patchControllerSetting'),
  route('DELETE', '/controller-settings/{id}/effective', MANAGEMENT, 'info', 'admin', 'deleteControllerSetting'),
];
