import { z } from 'zod';
import { baseDocumentShape } from '../entities/base-document.ts';

export const apiSessionSchema = z.object({
  ...baseDocumentShape,
  identityId: z.string(),
  authenticatorId: z.string(),
  ipAddress: z.string(),
  configTypes: z.array(z.string()),
  isMfaRequired: z.boolean(),
  isMfaComplete: z.boolean(),
  isCertExtendRequested: z.boolean(),
  isCertKeyRollRequested: z.boolean(),
  improperClientCertChain: z.boolean(),
  lastActivityAt: z.string(),
  /** sha256 of the token: the key of the session item, and the only form of the token at rest. */
  tokenHash: z.string(),
});
export type ApiSession = z.infer<typeof apiSessionSchema>;

export const API_SESSIONS_COLLECTION = 'api-sessions';
