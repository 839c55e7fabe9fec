import * as z from 'zod';
import { ApiError } from '../errors/api-error.ts';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { AUTHENTICATOR_FIELDS } from './identity.ts';

export const authenticatorSchema = z.object({
  ...baseDocumentShape,
  identityId: z.string(),
  method: z.enum(['updb', 'cert']),
  username: z.string().optional(),
  /** argon2id PHC string; never leaves the store. */
  passwordHash: z.string().optional(),
  certPem: z.string().optional(),
  fingerprint: z.string().optional(),
  isIssuedByNetwork: z.boolean().optional(),
  /** The third-party CA that issued the certificate (ottca); the authenticator goes with the CA. */
  caId: z.string().nullable().optional(),
  /** An extension's new certificate until the client proves it holds it (extend-verify); the old one works till then. */
  unverifiedCertPem: z.string().nullable().optional(),
  unverifiedFingerprint: z.string().nullable().optional(),
  /** An admin asked the client to extend its certificate (and to roll its key); shown at its cert logins. */
  isExtendRequested: z.boolean().optional(),
  isKeyRollRequested: z.boolean().optional(),
  /** When the certificate in force was issued: an IDENTITY revocation refuses certificates issued before it. */
  certIssuedAt: z.string().nullable().optional(),
  /** Consecutive wrong passwords, for the auth policy's lockout; never shown. */
  failedAttempts: z.number().int().optional(),
});
export type Authenticator = z.infer<typeof authenticatorSchema>;

export const authenticators: EntityDefinition<Authenticator> = {
  collection: 'authenticators',
  label: 'authenticator',
  schema: authenticatorSchema,
  unique: ['username', 'fingerprint'],
  // An identity holds at most one authenticator of each method.
  uniqueKeys: [
    {
      name: 'identityMethod',
      valueOf: (doc) => `${doc.identityId}/${doc.method}`,
      conflict: (value) => {
        const [identityId, method] = value.split('/');
        return new ApiError('MAX_AUTHENTICATOR_METHODS_REACHED', {
          message: `The identity already has a ${method} authenticator; an identity holds at most one of each method.`,
          cause: {
            field: 'method',
            reason: `identity ${identityId} already has a ${method} authenticator`,
            value: method,
          },
        });
      },
    },
  ],
  // A login by username or certificate fingerprint learns the identity from the marker: the authenticator, its
  // identity and the identity's MFA are then one batch read.
  // The sessions it opened end with it (its delete, however reached: its own, a re-enroll, its identity's or CA's
  // cascade). The routers check an SDK's certificate against its identity's certificate authenticator's fingerprint:
  // when that changes (an enrollment, an extension, a delete), the identity's sessions are sent again.
  routerNotices: (before, after) => {
    const identityId = (after ?? before)?.identityId;
    if (identityId === undefined) return [];
    const certificateChanged =
      (before?.method === 'cert' || after?.method === 'cert') && before?.fingerprint !== after?.fingerprint;
    return [
      ...(before !== undefined && after === undefined
        ? [{ kind: 'ended' as const, ended: { identityId, authenticatorId: before.id } }]
        : []),
      ...(certificateChanged ? [{ kind: 'certificates' as const, identityId }] : []),
    ];
  },
  markerCarries: (doc) => ({ identityId: doc.identityId }),
  references: [
    { field: 'identityId', collection: 'identities', onTargetDelete: 'cascade' },
    { field: 'caId', collection: 'cas', onTargetDelete: 'cascade' },
  ],
  parentOf: (doc) => ({ collection: 'identities', id: doc.identityId }),
  // Every authenticated request reads its identity: the identity naming its authenticators spares it reading the one
  // that opened its session (`isRevoked`).
  namedOn: (doc) => ({ collection: 'identities', id: doc.identityId, field: AUTHENTICATOR_FIELDS[doc.method] }),
  filterable: {
    ...BASE_FILTERABLE,
    identityId: 'string',
    method: 'string',
    username: 'string',
    fingerprint: 'string',
    isIssuedByNetwork: 'boolean',
  },
};
