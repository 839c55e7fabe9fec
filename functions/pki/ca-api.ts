import * as z from 'zod';
import { entityApi } from '#shared/crud/entity-api.ts';
import { cas, DEFAULT_IDENTITY_NAME_FORMAT, externalIdClaimSchema } from '#shared/entities/ca.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { newToken } from '#shared/ids.ts';
import { caBundleProblem, caCertificateOf } from '#shared/pki/ca-trust.ts';
import { fingerprintOf } from '#shared/pki/certificates.ts';
import { refreshTruststore } from '#shared/pki/trusted-cas.ts';
import { nameField, roleAttributesField, tagsField } from '#shared/schemas/common-fields.ts';
import { caView } from '#shared/views/ca-view.ts';

// A CA certificate with a few intermediates at most.
const certPemField = z.string().max(64 * 1024);
// Empty is the default format (`settingsOf`), as the reference fills it in: the admin console sends `""` when the box
// is left empty.
const identityNameFormatField = z.string().max(255);

const createSchema = z.object({
  name: nameField,
  certPem: certPemField,
  isAutoCaEnrollmentEnabled: z.boolean(),
  isOttCaEnrollmentEnabled: z.boolean(),
  isAuthEnabled: z.boolean(),
  identityRoles: roleAttributesField,
  identityNameFormat: identityNameFormatField.nullable().optional(),
  externalIdClaim: externalIdClaimSchema.nullable().optional(),
  tags: tagsField.optional(),
});
const replaceSchema = createSchema.omit({ certPem: true }).extend({ identityNameFormat: identityNameFormatField });

/**
 * The CA's certificate and its fingerprint; 400 on `certPem` unless the PEM is one CA certificate, optionally followed
 * by its own chain upward (`ca-trust.ts`).
 */
function caCertificate(pem: string) {
  const problem = caBundleProblem(pem);
  if (problem) throw invalidField('certPem', problem, pem.slice(0, 64));
  return { certPem: pem.trim(), fingerprint: fingerprintOf(caCertificateOf({ certPem: pem })!) };
}

/** The fields a replace sets; the certificate, its fingerprint and the verification state never change. */
function settingsOf(input: z.infer<typeof replaceSchema> | z.infer<typeof createSchema>) {
  return {
    name: input.name,
    isAutoCaEnrollmentEnabled: input.isAutoCaEnrollmentEnabled,
    isOttCaEnrollmentEnabled: input.isOttCaEnrollmentEnabled,
    isAuthEnabled: input.isAuthEnabled,
    identityRoles: input.identityRoles ?? [],
    identityNameFormat: input.identityNameFormat || DEFAULT_IDENTITY_NAME_FORMAT,
    externalIdClaim: input.externalIdClaim ?? null,
  };
}

/**
 * Third-party CAs (`/cas`). A CA is created unverified with a verification token (`verifyCa` in `ca-operations.ts`);
 * its certificate never changes (register another CA instead). Deleting it deletes its ottca enrollments and the
 * authenticators it issued (kit `cascade` references on `caId`), removes the sessions those opened, and takes it out
 * of the mTLS truststore.
 */
export const caApi = entityApi({
  def: cas,
  createSchema,
  replaceSchema,
  // A PATCH's null leaves these as they are, as the reference reads it.
  keptOnNull: ['name', 'isAutoCaEnrollmentEnabled', 'isOttCaEnrollmentEnabled', 'isAuthEnabled'],
  create: (input) => ({
    doc: { ...settingsOf(input), ...caCertificate(input.certPem), isVerified: false, verificationToken: newToken() },
  }),
  replace: (_before, input) => settingsOf(input),
  view: (_deps, doc) => caView(doc),
  // Only verified CAs are in the mTLS truststore.
  afterDelete: async (deps, ca) => {
    if (ca.isVerified) await refreshTruststore(deps);
  },
  // The sessions each authenticator it issued opened end with it, from its commit on: each authenticator's delete
  // carries its `ended` notice, however many transactions the cascade takes.
  // A CA may have issued the certificates of thousands of identities.
  manyChildren: true,
});
