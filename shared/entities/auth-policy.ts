import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';

export const authPolicySchema = z.object({
  ...baseDocumentShape,
  name: z.string(),
  primary: z.object({
    cert: z.object({ allowed: z.boolean(), allowExpiredCerts: z.boolean() }),
    extJwt: z.object({ allowed: z.boolean(), allowedSigners: z.array(z.string()) }),
    updb: z.object({
      allowed: z.boolean(),
      lockoutDurationMinutes: z.number().int(),
      maxAttempts: z.number().int(),
      minPasswordLength: z.number().int(),
      requireMixedCase: z.boolean(),
      requireNumberChar: z.boolean(),
      requireSpecialChar: z.boolean(),
    }),
  }),
  secondary: z.object({ requireExtJwtSigner: z.string().nullable(), requireTotp: z.boolean() }),
});
export type AuthPolicy = z.infer<typeof authPolicySchema>;

export const authPolicies: EntityDefinition<AuthPolicy> = {
  collection: 'auth-policies',
  label: 'auth policy',
  schema: authPolicySchema,
  unique: ['name'],
  sortedBy: ['name'],
  // A signer a policy names cannot be deleted while the policy names it.
  references: [
    { field: 'primary.extJwt.allowedSigners', collection: 'external-jwt-signers', onTargetDelete: 'refuse' },
    { field: 'secondary.requireExtJwtSigner', collection: 'external-jwt-signers', onTargetDelete: 'refuse' },
  ],
  filterable: { ...BASE_FILTERABLE, name: 'string' },
};

/** The id of the policy every identity gets when it names none. */
export const DEFAULT_AUTH_POLICY_ID = 'default';
