import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';

/** Which token of an external identity provider a signer's clients present (`ACCESS` unless set). */
export const TARGET_TOKENS = ['ACCESS', 'ID'] as const;

/**
 * A trusted issuer of JWTs: its keys come from one certificate (`certPem`, with `kid`) or from a JWKS endpoint.
 * `fingerprint`, `commonName`, `notBefore` and `notAfter` are read from the certificate, null for a JWKS signer.
 */
export const externalJwtSignerSchema = z.object({
  ...baseDocumentShape,
  name: z.string(),
  enabled: z.boolean(),
  issuer: z.string(),
  audience: z.string().nullable(),
  certPem: z.string().nullable(),
  jwksEndpoint: z.string().nullable(),
  kid: z.string().nullable(),
  claimsProperty: z.string(),
  useExternalId: z.boolean(),
  externalAuthUrl: z.string().nullable(),
  clientId: z.string().nullable(),
  scopes: z.array(z.string()),
  targetToken: z.enum(TARGET_TOKENS),
  fingerprint: z.string().nullable(),
  commonName: z.string().nullable(),
  notBefore: z.string().nullable(),
  notAfter: z.string().nullable(),
  /** Token enrollment (`POST /enroll/token`): whether its tokens may enroll identities, to a certificate or as-is. */
  enrollToCertEnabled: z.boolean().optional(),
  enrollToTokenEnabled: z.boolean().optional(),
  /** Claim paths (`name` or `/a/b`) of the enrolled identity's name and role attributes; its auth policy. */
  enrollNameClaimsSelector: z.string().nullable().optional(),
  enrollAttributeClaimsSelector: z.string().nullable().optional(),
  enrollAuthPolicyId: z.string().nullable().optional(),
});
export type ExternalJwtSigner = z.infer<typeof externalJwtSignerSchema>;

export const externalJwtSigners: EntityDefinition<ExternalJwtSigner> = {
  collection: 'external-jwt-signers',
  label: 'external JWT signer',
  schema: externalJwtSignerSchema,
  unique: ['name', 'issuer'],
  references: [{ field: 'enrollAuthPolicyId', collection: 'auth-policies', onTargetDelete: 'refuse' }],
  sortedBy: ['name'],
  filterable: {
    ...BASE_FILTERABLE,
    name: 'string',
    issuer: 'string',
    audience: 'string',
    enabled: 'boolean',
    kid: 'string',
    jwksEndpoint: 'string',
    fingerprint: 'string',
    commonName: 'string',
    claimsProperty: 'string',
    useExternalId: 'boolean',
    externalAuthUrl: 'string',
    clientId: 'string',
    notBefore: 'datetime',
    notAfter: 'datetime',
  },
};
