import { X509Certificate as NodeCertificate } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';
import type { Deps } from '../ports/deps.ts';
import { readSystemItem, writeSystemItem } from '../store/system-items.ts';
import { type NetworkCa, networkCa, newSerialNumber, spkiOf } from './network-ca.ts';
import { P256_SIGNING_ALGORITHM, SIGNER_KEY, signerCrypto } from './signer-crypto.ts';
import { x509Module } from './x509-module.ts';

/**
 * The controller's TLS server certificate: the server key's public half, issued by the network's signing CA, naming
 * the hosts clients reach the controller at. SDKs enroll against it with no CA configured: they accept the TLS
 * handshake only when the enrollment JWT verifies with this certificate's key, then trust the network CA from
 * `/.well-known/est/cacerts`, to which this certificate chains. Renewing it keeps the key, so every JWT already issued
 * stays good; a new key is a deliberate rotation (outstanding enrollments must be refreshed).
 */
export interface ServerCertificate {
  /** The leaf certificate (PEM). */
  readonly certPem: string;
  /** Leaf, then the signing CA: what a TLS server presents, so a client holding the root builds the chain. */
  readonly chainPem: string;
  /** The signing CA and root (PEM), the chain ACM asks for beside the leaf. */
  readonly caChainPem: string;
}

const VALIDITY_DAYS = 397;
/** Renewed this long before it expires (the bootstrap runs on every deploy and every day in AWS, at each local start). */
const RENEW_BEFORE_DAYS = 30;
const DAY_MS = 24 * 3600_000;
const BACKDATE_MS = 5 * 60_000;

/** Each name as a subject alternative name: IP addresses as such, anything else as a DNS name. */
function alternativeNames(names: readonly string[]): X509.JsonGeneralNames {
  return names.map((name) => ({ type: isIP(name) ? ('ip' as const) : ('dns' as const), value: name }));
}

/** X.509's upper bound on a common name (`ub-common-name`), which ACM enforces on an imported certificate. */
const COMMON_NAME_MAX = 64;

/**
 * The subject's common name: the first name that fits in one. Clients check the alternative names, never the common
 * name, so a longer host (an NLB's generated DNS name can pass 64 characters) is named there alone.
 */
function commonNameOf(names: readonly string[]): string {
  return names.find((name) => name.length <= COMMON_NAME_MAX) ?? 'ziti-controller';
}

async function issue(deps: Deps, ca: NetworkCa, names: readonly string[]): Promise<string> {
  const x509 = await x509Module();
  const spki = await spkiOf(deps.signers.server);
  const crypto = signerCrypto(deps.signers.signingCa);
  const issuer = new x509.X509Certificate(ca.signingCertPem);
  const issuerKeyId = issuer.getExtension(x509.SubjectKeyIdentifierExtension);
  const now = deps.now().getTime();
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: newSerialNumber(),
      subject: `CN=${names.length > 0 ? commonNameOf(names) : 'localhost'}`,
      issuer: issuer.subjectName,
      notBefore: new Date(now - BACKDATE_MS),
      notAfter: new Date(now + VALIDITY_DAYS * DAY_MS),
      publicKey: spki,
      signingKey: SIGNER_KEY,
      signingAlgorithm: P256_SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(alternativeNames(names), false),
        ...(issuerKeyId ? [new x509.AuthorityKeyIdentifierExtension(issuerKeyId.keyId, false)] : []),
        await x509.SubjectKeyIdentifierExtension.create(spki, false, crypto),
      ],
    },
    crypto,
  );
  return certificate.toString('pem');
}

/** Whether a stored certificate still serves: the server key's, naming every host, and not near its end. */
async function stillServes(deps: Deps, certPem: string, names: readonly string[]): Promise<boolean> {
  const certificate = new NodeCertificate(certPem);
  if (!certificate.publicKey.equals(await deps.signers.server.publicKey())) return false;
  if (Date.parse(certificate.validTo) - deps.now().getTime() < RENEW_BEFORE_DAYS * DAY_MS) return false;
  return names.every((name) => (isIP(name) ? certificate.checkIP(name) : certificate.checkHost(name)) !== undefined);
}

function assembled(ca: NetworkCa, certPem: string): ServerCertificate {
  const leaf = certPem.trim();
  return {
    certPem: `${leaf}\n`,
    chainPem: `${leaf}\n${ca.signingCertPem.trim()}\n`,
    caChainPem: `${ca.signingCertPem.trim()}\n${ca.rootCertPem.trim()}\n`,
  };
}

/**
 * The names the controller answers to, which no router certificate may carry: those its server certificate names
 * (stored by whoever issued it: the bootstrap from the stack's domains, `npm start` from its loopback and public
 * names) and the hosts of its configured addresses, in case a router enrolls before that certificate is issued.
 */
export async function controllerNames(deps: Deps): Promise<string[]> {
  const Item = await readSystemItem(deps.store, 'server-certificate');
  const stored = Array.isArray(Item?.names) ? Item.names.filter((name) => typeof name === 'string') : [];
  const { publicBaseUrl, mtlsBaseUrl, sdkBaseUrl } = deps.config;
  const configured = [publicBaseUrl, mtlsBaseUrl, sdkBaseUrl].flatMap((url) => (url ? [new URL(url).hostname] : []));
  return [...new Set([...stored, ...configured])];
}

/**
 * The server certificate for `names` (the first that fits is its common name), issued on first use and again when the key or
 * the names changed or it nears its end (one signature by the signing CA); kept in the table so that every instance
 * and every restart presents the same one.
 */
export async function ensureServerCertificate(
  deps: Deps,
  names: readonly string[],
): Promise<ServerCertificate & { readonly issued: boolean }> {
  const ca = await networkCa(deps);
  const Item = await readSystemItem(deps.store, 'server-certificate');
  const stored = typeof Item?.certPem === 'string' ? Item.certPem : undefined;
  if (stored && (await stillServes(deps, stored, names))) return { ...assembled(ca, stored), issued: false };
  const certPem = await issue(deps, ca, names);
  await writeSystemItem(deps.store, 'server-certificate', {
    certPem,
    names: [...names],
    issuedAt: deps.now().toISOString(),
  });
  return { ...assembled(ca, certPem), issued: true };
}
