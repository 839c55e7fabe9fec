import { crudOperations } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { type IdentityType, identityTypes } from '#shared/entities/identity-type.ts';
import { IDENTITY_TYPES } from '#shared/routes/groups/identity-routes.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';

const identityTypeApi: EntityApi<IdentityType, never, never, never> = {
  def: identityTypes,
  view: (_deps, doc) => ({ ...doc, _links: selfLinks('identity-types', doc.id) }),
};

/** `GET /identity-types` and `GET /identity-types/{id}`: the fixed catalog of identity types. */
export const identityTypeOperations = crudOperations(IDENTITY_TYPES, identityTypeApi);
