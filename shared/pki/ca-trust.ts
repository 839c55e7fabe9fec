import type { X509Certificate } from 'node:crypto';
import { allowsClientAuth, certificatesOf, isIssuedBy } from './certificates.ts';

/**
 * What a registered third-party CA vouches for. A CA is one certificate: the first of its `certPem`. The certificates
 * after it may only be that certificate's own chain upward (published to the mTLS truststore, which API Gateway wants
 * complete); they vouch for nothing themselves, so registering [someone else's CA, my CA] trusts neither theirs nor
 * anything it signed.
 */

/** The CA certificate of a registration (the first of its PEM), or undefined when the stored PEM is unreadable. */
export function caCertificateOf(ca: { readonly certPem: string }): X509Certificate | undefined {
  try {
    return certificatesOf(ca.certPem)[0];
  } catch {
    return undefined;
  }
}

/**
 * Why a PEM cannot register a CA, or undefined when it can: the first certificate must be a CA certificate, and each
 * further one must be a CA that issued the one before it (the first's chain, in order).
 */
export function caBundleProblem(pem: string): string | undefined {
  let bundle: X509Certificate[];
  try {
    bundle = certificatesOf(pem);
  } catch {
    return 'must be PEM-encoded X.509 certificates';
  }
  if (!bundle[0]?.ca) return 'the first certificate is not a CA certificate';
  for (let index = 1; index < bundle.length; index++) {
    if (!bundle[index]!.ca || !isIssuedBy(bundle[index - 1]!, bundle[index]!)) {
      return `certificate ${index + 1} is not the issuer of the one before it: a CA is one certificate and its chain`;
    }
  }
  return undefined;
}

/** Whether `certificate` was signed by exactly the registered CA's certificate (not by anything else of its PEM). */
export function isSignedByCa(certificate: X509Certificate, ca: { readonly certPem: string }): boolean {
  const caCertificate = caCertificateOf(ca);
  return caCertificate !== undefined && isIssuedBy(certificate, caCertificate);
}

/**
 * The key usage bits of a certificate, or undefined when it has no key usage extension. The ASN.1 parser loads here,
 * with the first certificate login or enrollment, not with the function.
 */
async function keyUsageOf(certificate: X509Certificate): Promise<number | undefined> {
  const [{ AsnConvert }, { Certificate, id_ce_keyUsage, KeyUsage }] = await Promise.all([
    import('@peculiar/asn1-schema'),
    import('@peculiar/asn1-x509'),
  ]);
  try {
    const parsed = AsnConvert.parse(certificate.raw, Certificate);
    const extension = parsed.tbsCertificate.extensions?.find((entry) => entry.extnID === id_ce_keyUsage);
    if (!extension) return undefined;
    return AsnConvert.parse(extension.extnValue.buffer, KeyUsage).toNumber();
  } catch {
    return 0;
  }
}

/** KeyUsage's digitalSignature bit, as @peculiar/asn1-x509's `KeyUsageFlags` numbers it (bit 0 of the BIT STRING). */
const DIGITAL_SIGNATURE = 1;

/**
 * Whether a certificate may stand for a client: an end-entity certificate (not a CA), whose key usage, when it says
 * one, includes digitalSignature, and whose extended key usage, when it says one, includes clientAuth. A CA
 * certificate issued by a trusted CA is a CA, not a device.
 */
export async function isClientLeaf(certificate: X509Certificate): Promise<boolean> {
  if (certificate.ca || !allowsClientAuth(certificate)) return false;
  const usage = await keyUsageOf(certificate);
  return usage === undefined || (usage & DIGITAL_SIGNATURE) !== 0;
}
