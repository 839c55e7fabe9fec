import * as z from 'zod';
import type { EntityApi, Fields } from '#shared/crud/entity-api.ts';
import type { BaseDocument, EntityDefinition, Tags } from '#shared/entities/entity-definition.ts';
import type { PolicySemantic } from '#shared/entities/policy-semantics.ts';
import { rolesField, semanticField } from '#shared/policy/roles.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { nameField, tagsField } from '#shared/schemas/common-fields.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';
import { type RoleNames, roleNames, rolesDisplay } from '#shared/views/roles-display.ts';

/** Request fields every policy kind has. */
export const policyFields = { name: nameField, semantic: semanticField, tags: tagsField.optional() };
export const optionalRoles = rolesField.optional();

/** The schema of a policy kind's create and replace bodies (the same required fields; a patch makes them optional). */
export function policySchemas<S extends z.ZodRawShape>(own: S) {
  const full = z.object({ ...policyFields, ...own });
  return { create: full, replace: full };
}

/** The fields of a policy kind's body: the common ones plus its role fields (and, for service policies, `type`). */
type PolicyInput = { name: string; semantic: PolicySemantic; tags?: Tags | null | undefined } & Record<string, unknown>;

/**
 * A policy kind's EntityApi: every kind is served alike (PUT semantics for absent role fields, display arrays);
 * `own` maps the kind's fields beyond the common ones from a body, and `createdWith` adds what only a create sets.
 */
export function policyApi<D extends BaseDocument, I extends PolicyInput>(options: {
  readonly def: EntityDefinition<D>;
  readonly schemas: { create: z.ZodType<I>; replace: z.ZodType<I> };
  readonly roleFields: readonly (keyof I & string)[];
  readonly own?: (input: I) => Partial<D>;
  readonly createdWith?: Partial<D>;
  readonly guard?: EntityApi<D, I, I, never>['guard'];
}): EntityApi<D, I, I, never> {
  const { def, schemas, roleFields, own = () => ({}), createdWith = {} } = options;
  const fieldsFrom = (input: I) =>
    ({
      name: input.name,
      semantic: input.semantic,
      ...own(input),
      ...rolesFrom(roleFields, input as Partial<Record<string, readonly string[] | null>>),
    }) as unknown as Partial<D>;
  return {
    def,
    createSchema: schemas.create,
    replaceSchema: schemas.replace,
    create: (input) => ({ doc: { ...fieldsFrom(input), ...createdWith } as Fields<D> }),
    replace: (_before, input) => fieldsFrom(input),
    ...(options.guard ? { guard: options.guard } : {}),
    view: async (deps, doc) => (await policyViews(deps, def, [doc]))[0],
    viewPage: (deps, docs) => policyViews(deps, def, docs),
  };
}

/** A policy document with each role field read from the body (absent or null: no roles, as PUT semantics ask). */
export function rolesFrom<F extends string>(
  fields: readonly F[],
  input: Partial<Record<F, readonly string[] | null | undefined>>,
): Record<F, string[]> {
  return Object.fromEntries(fields.map((field) => [field, [...(input[field] ?? [])]])) as Record<F, string[]>;
}

/**
 * A page of policies as views: each role field with its `*RolesDisplay`, the `@id` names read once for the page.
 */
export async function policyViews<D extends BaseDocument>(
  deps: Deps,
  def: EntityDefinition<D>,
  docs: readonly D[],
): Promise<unknown[]> {
  const selectors = def.selects?.fields ?? [];
  const names: RoleNames = await roleNames(
    deps,
    docs.flatMap((doc) =>
      selectors.map((selector) => ({
        collection: selector.collection,
        roles: (doc[selector.field] as readonly string[] | undefined) ?? [],
      })),
    ),
  );
  return docs.map((doc) => ({
    ...doc,
    ...Object.fromEntries(
      selectors.map((selector) => [
        `${selector.field}Display`,
        rolesDisplay((doc[selector.field] as readonly string[] | undefined) ?? [], selector.collection, names),
      ]),
    ),
    _links: selfLinks(
      def.collection,
      doc.id,
      Object.fromEntries(selectors.map((selector) => [selector.collection, selector.collection])),
    ),
  }));
}
