import * as z from 'zod';
import { POLICY_SEMANTICS, type PolicySemantic } from '../entities/policy-semantics.ts';
import { roleAttributeProblem } from '../schemas/role-attribute.ts';

export { POLICY_SEMANTICS, type PolicySemantic };

/** The role that selects every entity of the type; it must stand alone. */
export const ALL_ROLE = '#all';

/**
 * Roles per role field: each distinct role is an index item written in the policy's transaction, so a policy's
 * roles (three fields at most) must fit one transaction with room to change them.
 */
export const MAX_ROLES = 32;

/** `AllOf`/`AnyOf` in any case, stored in the documents' spelling. */
export const semanticField = z
  .string()
  .transform((value, ctx) => {
    const found = POLICY_SEMANTICS.find((semantic) => semantic.toLowerCase() === value.toLowerCase());
    if (!found) {
      ctx.addIssue({ code: 'custom', message: `must be one of ${POLICY_SEMANTICS.join(', ')}` });
      return z.NEVER;
    }
    return found;
  })
  .pipe(z.enum(POLICY_SEMANTICS));

/**
 * A policy's role field: `#attribute`, `@id` or `#all` (alone), with the reference's messages. Repeated roles are
 * kept once, in the order first given.
 */
export const rolesField = z
  .array(
    z
      .string()
      .refine((role) => /^[#@]./s.test(role), {
        message: 'role entries must prefixed with # (to indicate role attributes) or @ (to indicate a name or id)',
      })
      // `#ALL` is `#all`: an attribute cannot be named all in any case (`role-attribute.ts`).
      .transform((role) => (role.toLowerCase() === ALL_ROLE ? ALL_ROLE : role))
      .superRefine((role, ctx) => {
        if (role === ALL_ROLE) return;
        const problem = roleAttributeProblem(role.slice(1), role.startsWith('@'));
        if (problem) ctx.addIssue({ code: 'custom', message: `role ${problem}` });
      }),
  )
  .max(MAX_ROLES, `at most ${MAX_ROLES} roles per field`)
  .transform((roles) => [...new Set(roles)])
  .refine((roles) => !roles.includes(ALL_ROLE) || roles.length === 1, {
    message: 'if using #all, it should be the only role specified',
  })
  .nullable();

/** A policy's roles of one field, split: the `@ids` it names, the `#attributes`, and whether it is `#all`. */
export interface ParsedRoles {
  readonly all: boolean;
  readonly ids: readonly string[];
  readonly attributes: readonly string[];
}

export function parseRoles(roles: readonly string[]): ParsedRoles {
  return {
    all: roles.includes(ALL_ROLE),
    ids: roles.filter((role) => role.startsWith('@')).map((role) => role.slice(1)),
    attributes: roles.filter((role) => role.startsWith('#') && role !== ALL_ROLE).map((role) => role.slice(1)),
  };
}

/**
 * The reference's match rule (guide §e): an entity is selected when a role names its id, when the roles are `#all`,
 * or when its attributes hold every (AllOf) or any (AnyOf) `#attribute` role; no `#attribute` roles select nothing
 * by attribute. `@id` roles count whatever the semantic.
 */
export function selectsEntity(
  roles: readonly string[],
  semantic: PolicySemantic,
  entity: { readonly id: string; readonly attributes: readonly string[] },
): boolean {
  const { all, ids, attributes } = parseRoles(roles);
  if (all || ids.includes(entity.id)) return true;
  if (attributes.length === 0) return false;
  const own = new Set(entity.attributes);
  return semantic === 'AllOf' ? attributes.every((a) => own.has(a)) : attributes.some((a) => own.has(a));
}
