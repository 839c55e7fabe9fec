import type * as z from 'zod';
import { sentFields } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { type ServiceEdgeRouterPolicy, serviceEdgeRouterPolicies } from '#shared/entities/policies.ts';
import { newPolicyBase, optionalRoles, policySchemas, policyViews, rolesFrom } from './policy-fields.ts';

const ROLE_FIELDS = ['serviceRoles', 'edgeRouterRoles'] as const;

const schemas = policySchemas({ serviceRoles: optionalRoles, edgeRouterRoles: optionalRoles });
type Input = z.infer<typeof schemas.create>;
type Patch = z.infer<typeof schemas.patch>;

function fieldsFrom(input: Input) {
  return { name: input.name, semantic: input.semantic, tags: input.tags ?? {}, ...rolesFrom(ROLE_FIELDS, input) };
}

export const serviceEdgeRouterPolicyApi: EntityApi<ServiceEdgeRouterPolicy, Input, Input, Patch> = {
  def: serviceEdgeRouterPolicies,
  createSchema: schemas.create,
  replaceSchema: schemas.replace,
  patchSchema: schemas.patch,
  create: (input, context) => ({ doc: { ...newPolicyBase(context), ...fieldsFrom(input) } }),
  replace: (before, input) => ({ ...before, ...fieldsFrom(input) }),
  patch: (before, input, sent) => ({ ...before, ...fieldsFrom({ ...before, ...sentFields(input, sent) } as Input) }),
  view: async (deps, doc) => (await policyViews(deps, serviceEdgeRouterPolicies, [doc]))[0],
  viewPage: (deps, docs) => policyViews(deps, serviceEdgeRouterPolicies, docs),
};
