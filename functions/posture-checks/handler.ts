import { defaultDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { POSTURE_CHECKS } from '#shared/routes/groups/posture-check-routes.ts';
import { postureCheckApi } from './posture-check-api.ts';
import { listPostureCheckRoleAttributes, postureCheckTypeOperations } from './posture-check-lists.ts';

export const operations: OperationMap = {
  ...crudOperations(POSTURE_CHECKS, postureCheckApi),
  listPostureCheckRoleAttributes,
  ...postureCheckTypeOperations,
};

export const handler = createGroupHandler('posture-checks', operations, defaultDeps);
