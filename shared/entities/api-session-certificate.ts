import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';

/**
 * An ephemeral certificate: issued from a CSR to an API session, short-lived, gone with its API session. Listed under
 * the API session in GSI2 like its Dial/Bind sessions, and ended with them (`session-lifetime.ts`).
 */
export const apiSessionCertificateSchema = z.object({
  ...baseDocumentShape,
  apiSessionId: z.string(),
  identityId: z.string(),
  subject: z.string(),
  fingerprint: z.string(),
  validFrom: z.string(),
  validTo: z.string(),
  certificate: z.string(),
});
export type ApiSessionCertificate = z.infer<typeof apiSessionCertificateSchema>;

export const apiSessionCertificates: EntityDefinition<ApiSessionCertificate> = {
  collection: 'api-session-certificates',
  label: 'API session certificate',
  schema: apiSessionCertificateSchema,
  unique: ['fingerprint'],
  parentOf: (doc) => ({ collection: 'api-sessions', id: doc.apiSessionId }),
  filterable: {
    ...BASE_FILTERABLE,
    apiSessionId: 'string',
    subject: 'string',
    fingerprint: 'string',
    validFrom: 'datetime',
    validTo: 'datetime',
  },
};
