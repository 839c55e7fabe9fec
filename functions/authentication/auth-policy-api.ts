import * as z from 'zod';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { type AuthPolicy, authPolicies, DEFAULT_AUTH_POLICY_ID } from '#shared/entities/auth-policy.ts';
import { ApiError } from '#shared/errors/api-error.ts';
import { idField, nameField, tagsField } from '#shared/schemas/common-fields.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';

const count = z.number().int().min(0).max(1_000_000);

const primarySchema = z.object({
  cert: z.object({ allowed: z.boolean(), allowExpiredCerts: z.boolean() }),
  extJwt: z.object({ allowed: z.boolean(), allowedSigners: z.array(idField).max(100) }),
  updb: z.object({
    allowed: z.boolean(),
    lockoutDurationMinutes: count,
    maxAttempts: count,
    // The API's own floor for passwords is 5 characters; a policy can only raise it.
    minPasswordLength: z.number().int().min(5).max(100),
    requireMixedCase: z.boolean(),
    requireNumberChar: z.boolean(),
    requireSpecialChar: z.boolean(),
  }),
});
const secondarySchema = z.object({
  requireExtJwtSigner: idField.nullable().optional(),
  requireTotp: z.boolean(),
});

const createSchema = z.object({
  name: nameField,
  primary: primarySchema,
  secondary: secondarySchema,
  tags: tagsField.optional(),
});
type AuthPolicyInput = z.infer<typeof createSchema>;

/** PATCH: every part optional, down to single flags; only what is sent changes. */
const patchSchema = z.object({
  name: nameField.optional(),
  primary: z
    .object({
      cert: primarySchema.shape.cert.partial().nullable().optional(),
      extJwt: primarySchema.shape.extJwt.partial().nullable().optional(),
      updb: primarySchema.shape.updb.partial().nullable().optional(),
    })
    .nullable()
    .optional(),
  secondary: secondarySchema.partial().nullable().optional(),
  tags: tagsField.optional(),
});
type AuthPolicyPatch = z.infer<typeof patchSchema>;

function defined<T extends object>(value: T | null | undefined): Partial<T> {
  const out: Partial<T> = {};
  for (const [key, inner] of Object.entries(value ?? {}))
    if (inner !== undefined && inner !== null) (out as Record<string, unknown>)[key] = inner;
  return out;
}

function fromInput(input: AuthPolicyInput) {
  return {
    name: input.name,
    primary: input.primary,
    secondary: {
      requireExtJwtSigner: input.secondary.requireExtJwtSigner ?? null,
      requireTotp: input.secondary.requireTotp,
    },
    tags: input.tags ?? {},
  };
}

export const authPolicyApi: EntityApi<AuthPolicy, AuthPolicyInput, AuthPolicyInput, AuthPolicyPatch> = {
  def: authPolicies,
  createSchema,
  replaceSchema: createSchema,
  patchSchema,
  create: (input, context) => {
    const doc: AuthPolicy = { id: context.id, createdAt: context.now, updatedAt: context.now, ...fromInput(input) };
    return { doc };
  },
  replace: (before, input) => ({ ...before, ...fromInput(input) }),
  patch: (before, input, sent) => ({
    ...before,
    ...(sent.has('name') && input.name ? { name: input.name } : {}),
    ...(sent.has('tags') ? { tags: input.tags ?? {} } : {}),
    primary: {
      cert: { ...before.primary.cert, ...defined(input.primary?.cert) },
      extJwt: { ...before.primary.extJwt, ...defined(input.primary?.extJwt) },
      updb: { ...before.primary.updb, ...defined(input.primary?.updb) },
    },
    secondary: {
      ...before.secondary,
      ...defined(input.secondary),
      ...(input.secondary && 'requireExtJwtSigner' in input.secondary
        ? { requireExtJwtSigner: input.secondary.requireExtJwtSigner ?? null }
        : {}),
    },
  }),
  view: (_deps, doc) => ({ ...doc, _links: selfLinks('auth-policies', doc.id) }),
  guard: (stored, action) => {
    if (action === 'delete' && stored.id === DEFAULT_AUTH_POLICY_ID) {
      throw new ApiError('CAN_NOT_DELETE_REFERENCED_ENTITY', {
        message: 'The default auth policy applies to every identity that names none; it cannot be deleted.',
      });
    }
  },
};
