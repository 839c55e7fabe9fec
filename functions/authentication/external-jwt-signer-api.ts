import * as z from 'zod';
import { entityApi } from '#shared/crud/entity-api.ts';
import { externalJwtSigners } from '#shared/entities/external-jwt-signer.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { externalJwtSignerView } from '#shared/views/external-jwt-signer-view.ts';
import { blankAsNull, SIGNER_FIELDS, signerCertificateFacts } from './signer-fields.ts';

/** The create and replace body (the documents require name, enabled, issuer, audience). */
const createSchema = z.object(SIGNER_FIELDS);

/**
 * A signer's fields from a create or replace body: omitted fields at their defaults, blanks unset (a blank claims
 * property is `sub`), exactly one key source (a certificate with its `kid`, or a JWKS endpoint), and the
 * certificate's facts read from it.
 */
function signerFields({ certPem, jwksEndpoint, ...input }: z.infer<typeof createSchema>) {
  const kid = blankAsNull(input.kid);
  if (certPem && jwksEndpoint) {
    throw invalidField('jwksEndpoint', 'a signer has either certPem or jwksEndpoint, not both', jwksEndpoint);
  }
  if (!certPem && !jwksEndpoint) throw invalidField('certPem', 'one of certPem or jwksEndpoint is required', null);
  if (certPem && !kid) throw invalidField('kid', 'kid is required with certPem', kid);
  return {
    name: input.name,
    enabled: input.enabled,
    issuer: input.issuer,
    audience: blankAsNull(input.audience),
    certPem: certPem || null,
    jwksEndpoint: jwksEndpoint || null,
    kid,
    claimsProperty: blankAsNull(input.claimsProperty) ?? 'sub',
    useExternalId: input.useExternalId ?? false,
    externalAuthUrl: blankAsNull(input.externalAuthUrl),
    clientId: input.clientId ?? null,
    scopes: input.scopes ?? [],
    targetToken: input.targetToken ?? 'ACCESS',
    enrollToCertEnabled: input.enrollToCertEnabled ?? false,
    enrollToTokenEnabled: input.enrollToTokenEnabled ?? false,
    enrollNameClaimsSelector: input.enrollNameClaimsSelector ?? null,
    enrollAttributeClaimsSelector: input.enrollAttributeClaimsSelector ?? null,
    enrollAuthPolicyId: input.enrollAuthPolicyId ?? null,
    ...(certPem
      ? signerCertificateFacts(certPem)
      : { fingerprint: null, commonName: null, notBefore: null, notAfter: null }),
  };
}

export const externalJwtSignerApi = entityApi({
  def: externalJwtSigners,
  createSchema,
  replaceSchema: createSchema,
  // A PATCH's null leaves these as they are and clears the rest, as the reference has it.
  keptOnNull: [
    'name',
    'enabled',
    'issuer',
    'useExternalId',
    'targetToken',
    'enrollToCertEnabled',
    'enrollToTokenEnabled',
  ],
  create: (input) => ({ doc: signerFields(input) }),
  replace: (_before, input) => signerFields(input),
  view: (_deps, doc) => externalJwtSignerView(doc),
});
