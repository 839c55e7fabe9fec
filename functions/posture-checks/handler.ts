import { defaultDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { POSTURE_CHECK_ROUTES, POSTURE_CHECKS } from '#shared/routes/groups/posture-check-routes.ts';
import { postureCheckApi } from './posture-check-api.ts';
import { listPostureCheckRoleAttributes, postureCheckTypeOperations } from './posture-check-lists.ts';

export const operations: OperationMap = {
  ...crudOperations(POSTURE_CHECKS, postureCheckApi),
  listPostureCheckRoleAttributes,
  ...postureCheckTypeOperations,
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = POSTURE_CHECK_ROUTES;

export const handler = createGroupHandler('posture-checks', routes, operations, defaultDeps);
