import { createHash } from 'node:crypto';
import type * as X509 from '@peculiar/x509';
import type { Signer } from '../ports/signer.ts';
import { newSerialNumber } from './network-ca.ts';
import { serverNamesProblem } from './server-names.ts';
import { P256_SIGNING_ALGORITHM, SIGNER_KEY, signerCrypto } from './signer-crypto.ts';
import { x509Module } from './x509-module.ts';

/** A CSR that cannot be made into a certificate: unparsable, badly signed, or with a key this CA does not certify. */
export class UnusableCsrError extends Error {}

const CLIENT_CERT_DAYS = 365;
const BACKDATE_MS = 5 * 60_000;
const EC_CURVES = new Set(['P-256', 'P-384', 'P-521']);
const MIN_RSA_BITS = 2048;

/** Parses and checks a PEM CSR: its self-signature holds and its key is EC P-256/384/521 or RSA of 2048 bits or more. */
export async function parseCsr(pem: string): Promise<X509.Pkcs10CertificateRequest> {
  const x509 = await x509Module();
  let csr: X509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(pem.trim());
  } catch {
    throw new UnusableCsrError('the body is not a PEM certificate signing request');
  }
  const algorithm = csr.publicKey.algorithm as { name?: string; namedCurve?: string; modulusLength?: number };
  const ec = algorithm.name === 'ECDSA' || algorithm.name === 'ECDH';
  if (ec && !EC_CURVES.has(algorithm.namedCurve ?? '')) {
    throw new UnusableCsrError(`the CSR's EC curve ${algorithm.namedCurve ?? 'unknown'} is not supported`);
  }
  if (!ec && !(algorithm.name?.startsWith('RSA') && (algorithm.modulusLength ?? 0) >= MIN_RSA_BITS)) {
    throw new UnusableCsrError(
      `the CSR's key (${algorithm.name ?? 'unknown'}) is not EC or RSA of ${MIN_RSA_BITS}+ bits`,
    );
  }
  let valid = false;
  try {
    valid = await csr.verify(globalThis.crypto as never);
  } catch {
    valid = false;
  }
  if (!valid) throw new UnusableCsrError("the CSR's signature does not verify");
  return csr;
}

export interface IssuedCertificate {
  readonly pem: string;
  /** Lowercase hex SHA-1 of the DER: how cert login finds the authenticator (§b). */
  readonly fingerprint: string;
}

/**
 * Whom a certificate names. The controller sets the subject itself, whatever the CSR asks: CN = the entity's id and
 * a SAN URI `spiffe://<trust domain>/<identity|router>/<id>` (the reference's form since 1.x), so a certificate can
 * never claim to be another identity.
 */
export interface CertificateSubject {
  readonly kind: 'identity' | 'router';
  readonly id: string;
  readonly trustDomain: string;
}

export interface IssueOptions {
  readonly subject: CertificateSubject;
  /** `client` (identities, routers' client side, ephemeral) or `server` (a router's listener: its own names kept). */
  readonly kind?: 'client' | 'server';
  /** With `server`: the names the controller answers to (`controllerNames`), which the certificate may not name. */
  readonly controllerNames?: readonly string[];
  /** With `server`: loopback addresses allowed (a router beside `npm start`'s controller, `loopbackRouters`). */
  readonly loopback?: boolean;
  /** How long the certificate is valid; a year unless said (ephemeral certificates are short-lived). */
  readonly validityMs?: number;
}

/** The SPIFFE ID a certificate of this subject carries. */
export function spiffeIdOf(subject: CertificateSubject): string {
  return `spiffe://${subject.trustDomain}/${subject.kind}/${subject.id}`;
}

/**
 * The names a router's server CSR asks for, checked (`server-names.ts`): its own host names and addresses only, never
 * a wildcard, the controller's names, a loopback, link-local, metadata or unspecified address in any spelling;
 * anything else refuses the CSR.
 */
function requestedServerNames(
  x509: typeof X509,
  csr: X509.Pkcs10CertificateRequest,
  controllerNames: readonly string[],
  loopback: boolean,
): X509.JsonGeneralNames {
  const names = csr.extensions.find((extension) => extension instanceof x509.SubjectAlternativeNameExtension);
  const requested = names ? names.names.toJSON() : [];
  const problem = serverNamesProblem(requested, controllerNames, { loopback });
  if (problem) throw new UnusableCsrError(problem);
  return requested;
}

/** A certificate for the CSR's key, issued by the signing CA through its Signer: one `Sign`. */
export async function issueClientCertificate(
  signingCa: Signer,
  signingCaPem: string,
  csr: X509.Pkcs10CertificateRequest,
  now: Date,
  options: IssueOptions,
): Promise<IssuedCertificate> {
  const x509 = await x509Module();
  const server = options.kind === 'server';
  const names: X509.JsonGeneralNames = [
    { type: 'url', value: spiffeIdOf(options.subject) },
    ...(server ? requestedServerNames(x509, csr, options.controllerNames ?? [], options.loopback === true) : []),
  ];
  const validityMs = options.validityMs ?? CLIENT_CERT_DAYS * 24 * 3600_000;
  const crypto = signerCrypto(signingCa);
  const issuer = new x509.X509Certificate(signingCaPem);
  const issuerKeyId = issuer.getExtension(x509.SubjectKeyIdentifierExtension);
  const ec = (csr.publicKey.algorithm as { name?: string }).name !== 'RSASSA-PKCS1-v1_5';
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: newSerialNumber(),
      subject: new x509.Name([{ CN: [options.subject.id] }]),
      issuer: issuer.subjectName,
      notBefore: new Date(now.getTime() - BACKDATE_MS),
      notAfter: new Date(now.getTime() + validityMs),
      publicKey: csr.publicKey.rawData,
      signingKey: SIGNER_KEY,
      signingAlgorithm: P256_SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature |
            (ec ? x509.KeyUsageFlags.keyAgreement : x509.KeyUsageFlags.keyEncipherment),
          true,
        ),
        new x509.ExtendedKeyUsageExtension(
          server
            ? [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]
            : [x509.ExtendedKeyUsage.clientAuth],
        ),
        new x509.SubjectAlternativeNameExtension(names, false),
        ...(issuerKeyId ? [new x509.AuthorityKeyIdentifierExtension(issuerKeyId.keyId, false)] : []),
        await x509.SubjectKeyIdentifierExtension.create(csr.publicKey.rawData, false, crypto),
      ],
    },
    crypto,
  );
  return {
    pem: certificate.toString('pem'),
    fingerprint: createHash('sha1').update(Buffer.from(certificate.rawData)).digest('hex'),
  };
}
