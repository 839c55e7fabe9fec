import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';

export const REVOCATION_TYPES = ['JTI', 'IDENTITY', 'API_SESSION'] as const;
export type RevocationType = (typeof REVOCATION_TYPES)[number];

/**
 * A revocation, stored under the id it revokes (so a login finds it with a key read, no query):
 * - `JTI`: one credential by its id: a certificate by its fingerprint (cert login refuses it) or an enrollment token.
 * - `IDENTITY`: every certificate issued to the identity before the revocation (cert login refuses them, so the
 *   identity must extend or re-enroll) and its API sessions of that time.
 * - `API_SESSION`: that API session, with its ephemeral certificates.
 * It lasts until `expiresAt`, by when every credential it covers has expired anyway.
 */
export const revocationSchema = z.object({
  ...baseDocumentShape,
  type: z.enum(REVOCATION_TYPES),
  expiresAt: z.string(),
});
export type Revocation = z.infer<typeof revocationSchema>;

export const revocations: EntityDefinition<Revocation> = {
  collection: 'revocations',
  label: 'revocation',
  schema: revocationSchema,
  unique: [],
  filterable: { ...BASE_FILTERABLE, type: 'string', expiresAt: 'datetime' },
};
