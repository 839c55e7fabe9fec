import { crudResource, crudRoutes } from '../crud-resource.ts';
import type { Route } from '../route.ts';
import { MANAGEMENT, route } from '../route-builder.ts';

export const POSTURE_CHECKS = crudResource('posture-checks', '/posture-checks', 'PostureCheck', 'PostureChecks');
/** Seeded and read-only. */
export const POSTURE_CHECK_TYPES = crudResource(
  'posture-checks',
  '/posture-check-types',
  'PostureCheckType',
  'PostureCheckTypes',
  { actions: ['list', 'detail'] },
);

/** Posture checks and their types. */
export const POSTURE_CHECK_ROUTES: readonly Route[] = [
  ...crudRoutes(POSTURE_CHECKS),
  ...crudRoutes(POSTURE_CHECK_TYPES),
  route(
    'GET',
    '/posture-check-role-attributes',
    MANAGEMENT,
    'posture-checks',
    'admin',
    'listPostureCheckRoleAttributes',
  ),
];
