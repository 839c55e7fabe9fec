import { X509Certificate } from 'node:crypto';
import * as z from 'zod';
import { TARGET_TOKENS } from '#shared/entities/external-jwt-signer.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { jwksEndpointProblem } from '#shared/ext-jwt/jwks-endpoint.ts';
import { certificateFacts } from '#shared/pki/certificates.ts';
import { nameField, tagsField } from '#shared/schemas/common-fields.ts';

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

/** Blank: empty or only whitespace, what the reference treats as unset (`strings.TrimSpace(v) == ""`). */
const isBlank = (value: string) => value.trim() === '';
/** A blank optional text as unset (null); the admin console sends `""` for every text box left empty. */
export const blankAsNull = (value: string | null | undefined) =>
  value === null || value === undefined || isBlank(value) ? null : value;

const text = z.string().max(1024);
const jwksUrl = z
  .string()
  .max(2048)
  .superRefine((value, ctx) => {
    const problem = jwksEndpointProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
/** Blank is no URL at all, as the reference stores it. */
const webUrl = z
  .string()
  .max(2048)
  .refine((value) => isBlank(value) || urlWith(['https:', 'http:'])(value), { message: 'must be an http(s) URL' });
/** A certificate chain of a few certificates at most; the first one is the signer's. */
const certPemField = z.string().max(64 * 1024);

/** The fields of a signer's create and replace body. */
export const SIGNER_FIELDS = {
  name: nameField,
  enabled: z.boolean(),
  issuer: z.string().min(1).max(1024),
  audience: text.nullable(),
  certPem: certPemField.nullable().optional(),
  jwksEndpoint: jwksUrl.nullable().optional(),
  // Blank kid, claims property, audience and external auth URL are unset, as the reference keeps them.
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

/** The certificate's facts, or 400 naming `certPem` for anything that is not one PEM X.509 certificate. */
export function signerCertificateFacts(pem: string) {
  try {
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate block');
    return certificateFacts(new X509Certificate(pem));
  } catch {
    throw invalidField('certPem', 'must be a PEM-encoded X.509 certificate', pem.slice(0, 64));
  }
}
