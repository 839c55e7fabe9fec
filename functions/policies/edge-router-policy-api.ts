import type * as z from 'zod';
import { sentFields } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { type EdgeRouterPolicy, edgeRouterPolicies } from '#shared/entities/policies.ts';
import { ApiError } from '#shared/http/api-error.ts';
import { newPolicyBase, optionalRoles, policySchemas, policyViews, rolesFrom } from './policy-fields.ts';

const ROLE_FIELDS = ['identityRoles', 'edgeRouterRoles'] as const;

const schemas = policySchemas({ identityRoles: optionalRoles, edgeRouterRoles: optionalRoles });
type Input = z.infer<typeof schemas.create>;
type Patch = z.infer<typeof schemas.patch>;

function fieldsFrom(input: Input) {
  return { name: input.name, semantic: input.semantic, tags: input.tags ?? {}, ...rolesFrom(ROLE_FIELDS, input) };
}

export const edgeRouterPolicyApi: EntityApi<EdgeRouterPolicy, Input, Input, Patch> = {
  def: edgeRouterPolicies,
  createSchema: schemas.create,
  replaceSchema: schemas.replace,
  patchSchema: schemas.patch,
  create: (input, context) => ({ doc: { ...newPolicyBase(context), ...fieldsFrom(input), isSystem: false } }),
  replace: (before, input) => ({ ...before, ...fieldsFrom(input) }),
  patch: (before, input, sent) => ({ ...before, ...fieldsFrom({ ...before, ...sentFields(input, sent) } as Input) }),
  // The system policies tie a tunneling router's own identity to it; they come and go with the router.
  guard: (stored, action) => {
    if (!stored.isSystem) return;
    throw new ApiError(action === 'delete' ? 'ENTITY_CAN_NOT_BE_DELETED' : 'ENTITY_CAN_NOT_BE_UPDATED');
  },
  view: async (deps, doc) => (await policyViews(deps, edgeRouterPolicies, [doc]))[0],
  viewPage: (deps, docs) => policyViews(deps, edgeRouterPolicies, docs),
};
