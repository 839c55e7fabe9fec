import { crudOperations } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { listRoleAttributes } from '#shared/crud/list-role-attributes.ts';
import { postureChecks } from '#shared/entities/posture-check.ts';
import { type PostureCheckType, postureCheckTypes } from '#shared/entities/posture-check-types.ts';
import type { Operation } from '#shared/http/operation.ts';
import { POSTURE_CHECK_TYPES } from '#shared/routes/groups/posture-check-routes.ts';
import { postureCheckTypeView } from '#shared/views/posture-check-view.ts';

/** Posture check types are seeded and read-only. */
const postureCheckTypeApi: EntityApi<PostureCheckType, never, never, never> = {
  def: postureCheckTypes,
  view: (_deps, doc) => postureCheckTypeView(doc),
};

export const postureCheckTypeOperations = crudOperations(POSTURE_CHECK_TYPES, postureCheckTypeApi);

/** `GET /posture-check-role-attributes`: the role attributes posture checks hold, from the role-attribute catalog. */
export const listPostureCheckRoleAttributes: Operation = (request, deps) =>
  listRoleAttributes(request, deps, postureChecks.collection);
