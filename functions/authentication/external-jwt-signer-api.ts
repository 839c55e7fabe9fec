import { X509Certificate } from 'node:crypto';
import * as z from 'zod';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { type ExternalJwtSigner, externalJwtSigners, TARGET_TOKENS } from '#shared/entities/external-jwt-signer.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { nameField, tagsField } from '#shared/schemas/common-fields.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';

/** Whether a string is an absolute URL with one of the given schemes. */
function urlWith(schemes: readonly string[]) {
  return (value: string) => {
    try {
      const url = new URL(value);
      return schemes.includes(url.protocol) && url.hostname !== '';
    } catch {
      return false;
    }
  };
}

const text = z.string().max(1024);

/** Blank: empty or only whitespace, what the reference treats as unset (`strings.TrimSpace(v) == ""`). */
const isBlank = (value: string) => value.trim() === '';
/** A blank optional text as unset (null); the admin console sends `""` for every text box left empty. */
const blankAsNull = (value: string | null) => (value === null || isBlank(value) ? null : value);

/** The claim naming the identity when the signer names none (or a blank one), as the reference defaults it. */
const DEFAULT_CLAIMS_PROPERTY = 'sub';

const httpsUrl = z
  .string()
  .max(2048)
  .refine(urlWith(['https:']), { message: 'must be an https URL' });
// Blank is no URL at all, as the reference stores it.
const webUrl = z
  .string()
  .max(2048)
  .refine((value) => isBlank(value) || urlWith(['https:', 'http:'])(value), { message: 'must be an http(s) URL' });
// A certificate chain of a few certificates at most; the first one is the signer's.
const certPem = z.string().max(64 * 1024);

/** The writable fields; create and replace take the same body (the documents require name, enabled, issuer, audience). */
const fields = {
  name: nameField,
  enabled: z.boolean(),
  issuer: z.string().min(1).max(1024),
  audience: text.nullable(),
  certPem: certPem.nullable().optional(),
  jwksEndpoint: httpsUrl.nullable().optional(),
  // Blank kid, claims property, audience and external auth URL are unset (`complete`), as the reference keeps them.
  kid: text.nullable().optional(),
  claimsProperty: text.nullable().optional(),
  useExternalId: z.boolean().nullable().optional(),
  externalAuthUrl: webUrl.nullable().optional(),
  clientId: text.nullable().optional(),
  scopes: z.array(z.string().min(1).max(255)).max(64).nullable().optional(),
  targetToken: z.enum(TARGET_TOKENS).nullable().optional(),
  enrollToCertEnabled: z.boolean().nullable().optional(),
  enrollToTokenEnabled: z.boolean().nullable().optional(),
  enrollNameClaimsSelector: text.min(1).nullable().optional(),
  enrollAttributeClaimsSelector: text.min(1).nullable().optional(),
  enrollAuthPolicyId: text.min(1).nullable().optional(),
  tags: tagsField.optional(),
};
const createSchema = z.object(fields);
type SignerInput = z.infer<typeof createSchema>;

const patchSchema = z.object({
  ...fields,
  name: nameField.nullable().optional(),
  enabled: z.boolean().nullable().optional(),
  issuer: fields.issuer.nullable().optional(),
  audience: text.nullable().optional(),
});
type SignerPatch = z.infer<typeof patchSchema>;

type Writable = Omit<
  ExternalJwtSigner,
  'id' | 'createdAt' | 'updatedAt' | 'fingerprint' | 'commonName' | 'notBefore' | 'notAfter'
>;

/** The certificate's facts, or 400 naming `certPem` for anything that is not one PEM X.509 certificate. */
function certificateFacts(pem: string) {
  let cert: X509Certificate;
  try {
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate block');
    cert = new X509Certificate(pem);
  } catch {
    throw invalidField('certPem', 'must be a PEM-encoded X.509 certificate', pem.slice(0, 64));
  }
  const commonName =
    cert.subject
      .split('\n')
      .find((part) => part.startsWith('CN='))
      ?.slice(3) ?? '';
  return {
    fingerprint: cert.fingerprint.replaceAll(':', '').toLowerCase(),
    commonName,
    notBefore: new Date(cert.validFrom).toISOString(),
    notAfter: new Date(cert.validTo).toISOString(),
  };
}

/**
 * A signer's stored document from its writable fields: blanks unset (a blank claims property is `sub`), exactly one
 * key source (a certificate with its `kid`, or a JWKS endpoint), and the certificate's facts read from it.
 */
function complete(
  base: Pick<ExternalJwtSigner, 'id' | 'createdAt' | 'updatedAt'>,
  written: Writable,
): ExternalJwtSigner {
  const w: Writable = {
    ...written,
    audience: blankAsNull(written.audience),
    kid: blankAsNull(written.kid),
    externalAuthUrl: blankAsNull(written.externalAuthUrl),
    claimsProperty: isBlank(written.claimsProperty) ? DEFAULT_CLAIMS_PROPERTY : written.claimsProperty,
  };
  if (w.certPem && w.jwksEndpoint) {
    throw invalidField('jwksEndpoint', 'a signer has either certPem or jwksEndpoint, not both', w.jwksEndpoint);
  }
  if (!w.certPem && !w.jwksEndpoint) {
    throw invalidField('certPem', 'one of certPem or jwksEndpoint is required', null);
  }
  if (w.certPem && !w.kid) throw invalidField('kid', 'kid is required with certPem', w.kid);
  const facts = w.certPem
    ? certificateFacts(w.certPem)
    : { fingerprint: null, commonName: null, notBefore: null, notAfter: null };
  return { ...base, ...w, certPem: w.certPem || null, jwksEndpoint: w.jwksEndpoint || null, ...facts };
}

/** What a create or replace body sets: omitted optional fields take their defaults. */
function fromInput(input: SignerInput): Writable {
  return {
    name: input.name,
    enabled: input.enabled,
    issuer: input.issuer,
    audience: input.audience,
    certPem: input.certPem ?? null,
    jwksEndpoint: input.jwksEndpoint ?? null,
    kid: input.kid ?? null,
    claimsProperty: input.claimsProperty ?? DEFAULT_CLAIMS_PROPERTY,
    useExternalId: input.useExternalId ?? false,
    externalAuthUrl: input.externalAuthUrl ?? null,
    clientId: input.clientId ?? null,
    scopes: input.scopes ?? [],
    targetToken: input.targetToken ?? 'ACCESS',
    enrollToCertEnabled: input.enrollToCertEnabled ?? false,
    enrollToTokenEnabled: input.enrollToTokenEnabled ?? false,
    enrollNameClaimsSelector: input.enrollNameClaimsSelector ?? null,
    enrollAttributeClaimsSelector: input.enrollAttributeClaimsSelector ?? null,
    enrollAuthPolicyId: input.enrollAuthPolicyId ?? null,
    tags: input.tags ?? {},
  };
}

/** The key sources and descriptive fields a PATCH may clear with null; the rest keep their value on null. */
const CLEARABLE = [
  'certPem',
  'jwksEndpoint',
  'kid',
  'audience',
  'externalAuthUrl',
  'clientId',
  'enrollNameClaimsSelector',
  'enrollAttributeClaimsSelector',
  'enrollAuthPolicyId',
] as const;

function patched(before: ExternalJwtSigner, input: SignerPatch, sent: ReadonlySet<string>): Writable {
  const out: Record<string, unknown> = { ...before };
  for (const [key, value] of Object.entries(input)) {
    if (!sent.has(key)) continue;
    if (value !== null && value !== undefined) out[key] = value;
    else if ((CLEARABLE as readonly string[]).includes(key)) out[key] = null;
    else if (key === 'tags') out.tags = {};
    // The reference stores its default for a claims property sent as null, as for a blank one.
    else if (key === 'claimsProperty') out.claimsProperty = DEFAULT_CLAIMS_PROPERTY;
    else if (key === 'scopes') out.scopes = [];
  }
  return out as unknown as Writable;
}

export function externalJwtSignerView(doc: ExternalJwtSigner) {
  return {
    ...doc,
    commonName: doc.commonName ?? '',
    enrollToCertEnabled: doc.enrollToCertEnabled ?? false,
    enrollToTokenEnabled: doc.enrollToTokenEnabled ?? false,
    // Plain strings in the reference's model: empty when unset.
    enrollNameClaimsSelector: doc.enrollNameClaimsSelector ?? '',
    enrollAttributeClaimsSelector: doc.enrollAttributeClaimsSelector ?? '',
    enrollAuthPolicyId: doc.enrollAuthPolicyId ?? '',
    _links: selfLinks('external-jwt-signers', doc.id),
  };
}

export const externalJwtSignerApi: EntityApi<ExternalJwtSigner, SignerInput, SignerInput, SignerPatch> = {
  def: externalJwtSigners,
  createSchema,
  replaceSchema: createSchema,
  patchSchema,
  create: (input, context) => ({
    doc: complete({ id: context.id, createdAt: context.now, updatedAt: context.now }, fromInput(input)),
  }),
  replace: (before, input) => complete(before, fromInput(input)),
  patch: (before, input, sent) => complete(before, patched(before, input, sent)),
  view: (_deps, doc) => externalJwtSignerView(doc),
};
