import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';

/** Where a CA's certificates carry the value matched against `identity.externalId` (`externalIdClaim`). */
export const CLAIM_LOCATIONS = ['COMMON_NAME', 'SAN_URI', 'SAN_EMAIL'] as const;
export const CLAIM_MATCHERS = ['ALL', 'PREFIX', 'SUFFIX', 'SCHEME'] as const;
export const CLAIM_PARSERS = ['NONE', 'SPLIT'] as const;

export const externalIdClaimSchema = z.object({
  location: z.enum(CLAIM_LOCATIONS),
  matcher: z.enum(CLAIM_MATCHERS),
  matcherCriteria: z.string(),
  parser: z.enum(CLAIM_PARSERS),
  parserCriteria: z.string(),
  index: z.number().int(),
});
export type ExternalIdClaim = z.infer<typeof externalIdClaimSchema>;

/** The reference's default name of an identity a CA auto-enrolls. */
export const DEFAULT_IDENTITY_NAME_FORMAT = '[caName]-[commonName]';

/**
 * A third-party certificate authority. It is created unverified with a `verificationToken`; an admin proves the CA's
 * key is theirs by posting a certificate it signed with that token as its common name. Only a verified CA enrolls
 * (ottca, auto-enrollment) or authenticates (`isAuthEnabled`) identities.
 */
export const caSchema = z.object({
  ...baseDocumentShape,
  name: z.string(),
  /** The CA's certificate (PEM; may hold its chain, the first is the CA). */
  certPem: z.string(),
  /** Lowercase hex SHA-1 of the CA certificate's DER: one registration per CA. */
  fingerprint: z.string(),
  isVerified: z.boolean(),
  /** Null once verified: the token has done its job. */
  verificationToken: z.string().nullable(),
  isAutoCaEnrollmentEnabled: z.boolean(),
  isOttCaEnrollmentEnabled: z.boolean(),
  isAuthEnabled: z.boolean(),
  identityRoles: z.array(z.string()),
  identityNameFormat: z.string(),
  externalIdClaim: externalIdClaimSchema.nullable(),
});
export type Ca = z.infer<typeof caSchema>;

export const cas: EntityDefinition<Ca> = {
  collection: 'cas',
  label: 'CA',
  schema: caSchema,
  unique: ['name', 'fingerprint'],
  sortedBy: ['name'],
  filterable: {
    ...BASE_FILTERABLE,
    name: 'string',
    fingerprint: 'string',
    isVerified: 'boolean',
    isAutoCaEnrollmentEnabled: 'boolean',
    isOttCaEnrollmentEnabled: 'boolean',
    isAuthEnabled: 'boolean',
    identityNameFormat: 'string',
    identityRoles: 'stringSet',
  },
};
