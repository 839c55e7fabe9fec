import * as z from 'zod';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { type Ca, cas, DEFAULT_IDENTITY_NAME_FORMAT, externalIdClaimSchema } from '#shared/entities/ca.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { newToken } from '#shared/ids.ts';
import { caBundleProblem, caCertificateOf } from '#shared/pki/ca-trust.ts';
import { fingerprintOf } from '#shared/pki/certificates.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { nameField, roleAttributesField, tagsField } from '#shared/schemas/common-fields.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';

// A CA certificate with a few intermediates at most.
const certPemField = z.string().max(64 * 1024);
// Empty is the default format (`settingsOf`, `patched`), as the reference fills it in: the admin console sends `""`
// when the box is left empty.
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
type CaCreate = z.infer<typeof createSchema>;

const replaceSchema = createSchema.omit({ certPem: true }).extend({ identityNameFormat: identityNameFormatField });
type CaReplace = z.infer<typeof replaceSchema>;

const patchSchema = z.object({
  name: nameField.nullable().optional(),
  isAutoCaEnrollmentEnabled: z.boolean().nullable().optional(),
  isOttCaEnrollmentEnabled: z.boolean().nullable().optional(),
  isAuthEnabled: z.boolean().nullable().optional(),
  identityRoles: roleAttributesField.optional(),
  identityNameFormat: identityNameFormatField.nullable().optional(),
  externalIdClaim: externalIdClaimSchema.nullable().optional(),
  tags: tagsField.optional(),
});
type CaPatch = z.infer<typeof patchSchema>;

/**
 * The CA certificate's fingerprint; 400 on `certPem` unless the PEM is one CA certificate, optionally followed by its
 * own chain upward (`ca-trust.ts`).
 */
function caFingerprintOf(pem: string) {
  const problem = caBundleProblem(pem);
  if (problem) throw invalidField('certPem', problem, pem.slice(0, 64));
  return { fingerprint: fingerprintOf(caCertificateOf({ certPem: pem })!) };
}

/** The fields a replace sets; the certificate, its fingerprint and the verification state never change. */
function settingsOf(input: CaReplace | CaCreate) {
  return {
    name: input.name,
    isAutoCaEnrollmentEnabled: input.isAutoCaEnrollmentEnabled,
    isOttCaEnrollmentEnabled: input.isOttCaEnrollmentEnabled,
    isAuthEnabled: input.isAuthEnabled,
    identityRoles: input.identityRoles ?? [],
    identityNameFormat: input.identityNameFormat || DEFAULT_IDENTITY_NAME_FORMAT,
    externalIdClaim: input.externalIdClaim ?? null,
    tags: input.tags ?? {},
  };
}

function patched(before: Ca, input: CaPatch, sent: ReadonlySet<string>): Ca {
  const next: Ca = { ...before };
  for (const key of ['name', 'isAutoCaEnrollmentEnabled', 'isOttCaEnrollmentEnabled', 'isAuthEnabled'] as const) {
    const value = input[key];
    if (sent.has(key) && value !== null && value !== undefined) Object.assign(next, { [key]: value });
  }
  if (sent.has('identityRoles')) next.identityRoles = input.identityRoles ?? [];
  if (sent.has('identityNameFormat'))
    next.identityNameFormat = input.identityNameFormat || DEFAULT_IDENTITY_NAME_FORMAT;
  if (sent.has('externalIdClaim')) next.externalIdClaim = input.externalIdClaim ?? null;
  if (sent.has('tags')) next.tags = input.tags ?? {};
  return next;
}

/** A CA as the API shows it: `verify` while unverified, `jwt` while it auto-enrolls. */
export function caView(ca: Ca) {
  // The reference leaves out an unset claim (a nil pointer) rather than answering null.
  const { verificationToken, externalIdClaim, ...rest } = ca;
  const links: Record<string, { href: string }> = { ...selfLinks('cas', ca.id) };
  if (!ca.isVerified) links.verify = { href: `./cas/${ca.id}/verify` };
  if (ca.isAutoCaEnrollmentEnabled) links.jwt = { href: `./cas/${ca.id}/jwt` };
  return {
    ...rest,
    ...(externalIdClaim ? { externalIdClaim } : {}),
    ...(verificationToken ? { verificationToken } : {}),
    _links: links,
  };
}

/**
 * Third-party CAs (`/cas`). A CA is created unverified with a verification token (`verify-ca.ts` verifies it); its
 * certificate never changes (register another CA instead). Deleting it deletes its ottca enrollments and the
 * authenticators it issued (kit `cascade` references on `caId`) and takes it out of the mTLS truststore.
 */
export const caApi: EntityApi<Ca, CaCreate, CaReplace, CaPatch> = {
  def: cas,
  createSchema,
  replaceSchema,
  patchSchema,
  create: (input, context) => ({
    doc: {
      id: context.id,
      createdAt: context.now,
      updatedAt: context.now,
      ...settingsOf(input),
      certPem: input.certPem.trim(),
      ...caFingerprintOf(input.certPem),
      isVerified: false,
      verificationToken: newToken(),
    },
  }),
  replace: (before, input) => ({ ...before, ...settingsOf(input) }),
  patch: (before, input, sent) => patched(before, input, sent),
  view: (_deps: Deps, doc) => caView(doc),
  // A CA may have issued the certificates of thousands of identities.
  manyChildren: true,
};
