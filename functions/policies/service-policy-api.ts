import * as z from 'zod';
import { sentFields } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { DIAL_BIND, type ServicePolicy, servicePolicies } from '#shared/entities/policies.ts';
import { newPolicyBase, optionalRoles, policySchemas, policyViews, rolesFrom } from './policy-fields.ts';

const ROLE_FIELDS = ['identityRoles', 'serviceRoles', 'postureCheckRoles'] as const;

const schemas = policySchemas({
  type: z.enum(DIAL_BIND),
  identityRoles: optionalRoles,
  serviceRoles: optionalRoles,
  postureCheckRoles: optionalRoles,
});
type Input = z.infer<typeof schemas.create>;
type Patch = z.infer<typeof schemas.patch>;

function fieldsFrom(input: Input) {
  return {
    name: input.name,
    semantic: input.semantic,
    type: input.type,
    tags: input.tags ?? {},
    ...rolesFrom(ROLE_FIELDS, input),
  };
}

export const servicePolicyApi: EntityApi<ServicePolicy, Input, Input, Patch> = {
  def: servicePolicies,
  createSchema: schemas.create,
  replaceSchema: schemas.replace,
  patchSchema: schemas.patch,
  create: (input, context) => ({ doc: { ...newPolicyBase(context), ...fieldsFrom(input) } }),
  replace: (before, input) => ({ ...before, ...fieldsFrom(input) }),
  patch: (before, input, sent) => ({ ...before, ...fieldsFrom({ ...before, ...sentFields(input, sent) } as Input) }),
  view: async (deps, doc) => (await policyViews(deps, servicePolicies, [doc]))[0],
  viewPage: (deps, docs) => policyViews(deps, servicePolicies, docs),
};
