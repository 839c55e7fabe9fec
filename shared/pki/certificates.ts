import { X509Certificate } from 'node:crypto';

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** A PEM text that is not what the caller must send: `kind` says whether it is no PEM at all or other blocks. */
export class PemError extends Error {
  readonly kind: 'not-pem' | 'not-certificate' | 'unparsable';
  constructor(kind: PemError['kind']) {
    super(kind);
    this.kind = kind;
  }
}

/** Every certificate of a PEM bundle, in order. No PEM block, a non-certificate block or a broken one each throw. */
export function certificatesOf(pem: string): X509Certificate[] {
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) throw new PemError('not-pem');
  return blocks.map((block) => {
    if (block[1] !== 'CERTIFICATE') throw new PemError('not-certificate');
    try {
      return new X509Certificate(block[0]);
    } catch {
      throw new PemError('unparsable');
    }
  });
}

/** The first certificate of a PEM bundle, or undefined when there is none that parses. */
export function firstCertificateOf(pem: string | undefined): X509Certificate | undefined {
  if (!pem) return undefined;
  try {
    return certificatesOf(pem)[0];
  } catch {
    return undefined;
  }
}

/** Lowercase hex SHA-1 of the DER: how the reference names a certificate (§b). */
export function fingerprintOf(certificate: X509Certificate): string {
  return certificate.fingerprint.replaceAll(':', '').toLowerCase();
}

/** The subject's common name, or '' when it has none. */
export function commonNameOf(certificate: X509Certificate): string {
  const line = certificate.subject.split('\n').find((part) => part.startsWith('CN='));
  return line ? line.slice(3) : '';
}

/** What is shown of a certificate: its fingerprint, common name and validity, as ISO-8601. */
export function certificateFacts(certificate: X509Certificate) {
  return {
    fingerprint: fingerprintOf(certificate),
    commonName: commonNameOf(certificate),
    notBefore: new Date(certificate.validFrom).toISOString(),
    notAfter: new Date(certificate.validTo).toISOString(),
  };
}

/** Whether `issuer` signed `certificate` (names and signature; validity dates are the caller's concern). */
export function isIssuedBy(certificate: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return certificate.checkIssued(issuer) && certificate.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/**
 * Whether a leaf chains to one of `anchors`: signed by an anchor, or by an intermediate of `chain` (the certificates
 * the client sent after its leaf) that chains to one. Expiry is not looked at, as the reference verifies chains with
 * expiry ignored and applies the auth policy's `allowExpiredCerts` afterwards.
 */
export function chainsTo(
  leaf: X509Certificate,
  anchors: readonly X509Certificate[],
  chain: readonly X509Certificate[] = [],
): boolean {
  const seen = new Set<string>();
  let current: X509Certificate | undefined = leaf;
  while (current && !seen.has(current.fingerprint256)) {
    seen.add(current.fingerprint256);
    const child: X509Certificate = current;
    if (anchors.some((anchor) => isIssuedBy(child, anchor))) return true;
    current = chain.find((candidate) => candidate.ca && isIssuedBy(child, candidate));
  }
  return false;
}

/** Whether the certificate may authenticate a client: no extended key usage, or one that includes clientAuth. */
export function allowsClientAuth(certificate: X509Certificate): boolean {
  const usages = certificate.keyUsage;
  return !usages || usages.length === 0 || usages.includes('1.3.6.1.5.5.7.3.2');
}

/** Whether the certificate is outside its validity period at `now`. */
export function isExpiredAt(certificate: X509Certificate, now: Date): boolean {
  const time = now.getTime();
  return time < Date.parse(certificate.validFrom) || time > Date.parse(certificate.validTo);
}
