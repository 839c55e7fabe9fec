import type { Route } from '../route.ts';
import { MANAGEMENT, route } from '../route-builder.ts';

/** Posture checks and their types. */
export const POSTURE_CHECK_ROUTES: readonly Route[] = [
  route('GET', '/posture-checks', MANAGEMENT, 'posture-checks', 'admin', 'listPostureChecks'),
  route('POST', '/posture-checks', MANAGEMENT, 'posture-checks', 'admin', 'createPostureCheck'),
  route('GET', '/posture-checks/{id}', MANAGEMENT, 'posture-checks', 'admin', 'detailPostureCheck'),
  route('PUT', '/posture-checks/{id}', MANAGEMENT, 'posture-checks', 'admin', 'updatePostureCheck'),
  route('PATCH', '/posture-checks/{id}', MANAGEMENT, 'posture-checks', 'admin', 'patchPostureCheck'),
  route('DELETE', '/posture-checks/{id}', MANAGEMENT, 'posture-checks', 'admin', 'deletePostureCheck'),
  route('GET', '/posture-check-types', MANAGEMENT, 'posture-checks', 'admin', 'listPostureCheckTypes'),
  route('GET', '/posture-check-types/{id}', MANAGEMENT, 'posture-checks', 'admin', 'detailPostureCheckType'),
  route(
    'GET',
    '/posture-check-role-attributes',
    MANAGEMENT,
    'posture-checks',
    'admin',
    'listPostureCheckRoleAttributes',
  ),
];
