import * as z from 'zod';
import type { WriteContext } from '#shared/crud/entity-api.ts';
import type { Deps } from '#shared/deps.ts';
import type { BaseDocument, EntityDefinition } from '#shared/entities/entity-definition.ts';
import { rolesField, semanticField } from '#shared/policy/roles.ts';
import { nameField, tagsField } from '#shared/schemas/common-fields.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';
import { type RoleNames, roleNames, rolesDisplay } from '#shared/views/roles-display.ts';

/** Request fields every policy kind has. */
export const policyFields = { name: nameField, semantic: semanticField, tags: tagsField.optional() };
export const optionalRoles = rolesField.optional();

/** Schemas of a policy kind's create/replace (same required fields) and patch (nothing required) bodies. */
export function policySchemas<S extends z.ZodRawShape>(own: S) {
  const full = z.object({ ...policyFields, ...own });
  return { create: full, replace: full, patch: full.partial() };
}

/** The base fields of a new policy document. */
export function newPolicyBase(context: WriteContext & { readonly id: string }) {
  return { id: context.id, createdAt: context.now, updatedAt: context.now };
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
