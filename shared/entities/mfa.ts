import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';

/**
 * An identity's TOTP enrollment: at most one, so its id is the identity's id (a second enrollment fails on the
 * entity's own key, and a login finds it with one read by key).
 */
export const mfaSchema = z.object({
  ...baseDocumentShape,
  identityId: z.string(),
  isVerified: z.boolean(),
  /**
   * The TOTP seed and the unused recovery codes, sealed by the secret box with the identity's id as context. The
   * codes are sealed rather than hashed because the API shows them again (detailMfaRecoveryCodes).
   */
  sealed: z.string(),
  /** The last TOTP time step accepted: codes of it and earlier steps are refused, so a code works once. */
  lastTimeStep: z.number().int(),
  /** Wrong codes in a row (the auth policy's lockout counts them here, whatever the session's primary method). */
  failedAttempts: z.number().int().optional(),
});
export type Mfa = z.infer<typeof mfaSchema>;

export const mfas: EntityDefinition<Mfa> = {
  collection: 'mfas',
  label: 'MFA',
  schema: mfaSchema,
  unique: [],
  references: [{ field: 'identityId', collection: 'identities', onTargetDelete: 'cascade' }],
  parentOf: (doc) => ({ collection: 'identities', id: doc.identityId }),
  filterable: { ...BASE_FILTERABLE, identityId: 'string', isVerified: 'boolean' },
};
