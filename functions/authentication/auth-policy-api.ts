import * as z from 'zod';
import { entityApi } from '#shared/crud/entity-api.ts';
import { authPolicies, DEFAULT_AUTH_POLICY_ID } from '#shared/entities/auth-policy.ts';
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

function fromInput(input: z.infer<typeof createSchema>) {
  const { requireExtJwtSigner = null, requireTotp } = input.secondary;
  return { name: input.name, primary: input.primary, secondary: { requireExtJwtSigner, requireTotp } };
}

export const authPolicyApi = entityApi({
  def: authPolicies,
  createSchema,
  replaceSchema: createSchema,
  // A PATCH changes single flags: `{"primary": {"updb": {"maxAttempts": 5}}}` leaves the rest as it is.
  nestedPatch: true,
  create: (input) => ({ doc: fromInput(input) }),
  replace: (_before, input) => fromInput(input),
  view: (_deps, doc) => ({ ...doc, _links: selfLinks('auth-policies', doc.id) }),
  guard: (stored, action) => {
    if (action === 'delete' && stored.id === DEFAULT_AUTH_POLICY_ID) {
      throw new ApiError('CAN_NOT_DELETE_REFERENCED_ENTITY', {
        message: 'The default auth policy applies to every identity that names none; it cannot be deleted.',
      });
    }
  },
});
