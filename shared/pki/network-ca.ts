import { type KeyObject, X509Certificate as NodeCertificate, randomBytes } from 'node:crypto';
import type { Deps } from '../ports/deps.ts';
import type { Signer, Signers } from '../ports/signer.ts';
import { createSystemItem, readSystemItem } from '../store/system-items.ts';
import { P256_SIGNING_ALGORITHM, SIGNER_KEY, signerCrypto } from './signer-crypto.ts';
import { x509Module } from './x509-module.ts';

/** The network's CA certificates: the self-signed root and the signing CA it issued, which issues everything else. */
export interface NetworkCa {
  readonly rootCertPem: string;
  readonly signingCertPem: string;
}

const ROOT_YEARS = 20;
const SIGNING_YEARS = 10;
const YEAR_MS = 365 * 24 * 3600_000;
/** Certificates start a little in the past so a client with a slow clock still accepts them. */
const BACKDATE_MS = 5 * 60_000;

export const ROOT_CA_NAME = 'CN=Ziti Serverless Controller Root CA, O=Ziti Serverless Controller';
export const SIGNING_CA_NAME = 'CN=Ziti Serverless Controller Signing CA, O=Ziti Serverless Controller';

/** A positive 128-bit serial number (the high bit clear keeps its DER integer positive without padding). */
export function newSerialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f || 0x01;
  return bytes.toString('hex');
}

export async function spkiOf(signer: Signer): Promise<ArrayBuffer> {
  const der = (await signer.publicKey()).export({ format: 'der', type: 'spki' });
  return der.buffer.slice(der.byteOffset, der.byteOffset + der.byteLength) as ArrayBuffer;
}

/** One `Sign` per certificate: the root signs itself, then the signing CA. */
export async function buildNetworkCa(signers: Signers, now: Date): Promise<NetworkCa> {
  const x509 = await x509Module();
  const [rootSpki, signingSpki] = await Promise.all([spkiOf(signers.rootCa), spkiOf(signers.signingCa)]);
  const rootCrypto = signerCrypto(signers.rootCa);
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const rootKeyId = await x509.SubjectKeyIdentifierExtension.create(rootSpki, false, rootCrypto);
  const root = await x509.X509CertificateGenerator.create(
    {
      serialNumber: newSerialNumber(),
      subject: ROOT_CA_NAME,
      issuer: ROOT_CA_NAME,
      notBefore,
      notAfter: new Date(now.getTime() + ROOT_YEARS * YEAR_MS),
      publicKey: rootSpki,
      signingKey: SIGNER_KEY,
      signingAlgorithm: P256_SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        rootKeyId,
      ],
    },
    rootCrypto,
  );
  const signing = await x509.X509CertificateGenerator.create(
    {
      serialNumber: newSerialNumber(),
      subject: SIGNING_CA_NAME,
      issuer: root.subject,
      notBefore,
      notAfter: new Date(now.getTime() + SIGNING_YEARS * YEAR_MS),
      publicKey: signingSpki,
      signingKey: SIGNER_KEY,
      signingAlgorithm: P256_SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(signingSpki, false, rootCrypto),
        new x509.AuthorityKeyIdentifierExtension(rootKeyId.keyId, false),
      ],
    },
    rootCrypto,
  );
  return { rootCertPem: root.toString('pem'), signingCertPem: signing.toString('pem') };
}

function samePublicKey(certPem: string, key: KeyObject): boolean {
  return new NodeCertificate(certPem).publicKey.equals(key);
}

const loaded = new WeakMap<object, Promise<NetworkCa>>();

async function readNetworkCa(deps: Deps): Promise<NetworkCa | undefined> {
  const Item = await readSystemItem(deps.store, 'network-ca');
  return Item ? { rootCertPem: String(Item.rootCertPem), signingCertPem: String(Item.signingCertPem) } : undefined;
}

/**
 * Builds the network CA on the first bootstrap and stores it; later bootstraps keep the stored one (concurrent first
 * bootstraps: the first write wins, the others read it back). A stored CA whose keys are not the configured ones is
 * refused: reissuing it silently would orphan every certificate issued so far.
 */
export async function ensureNetworkCa(deps: Deps): Promise<NetworkCa> {
  const existing = await readNetworkCa(deps);
  const ca = existing ?? (await buildNetworkCa(deps.signers, deps.now()));
  if (
    !existing &&
    !(await createSystemItem(deps.store, 'network-ca', { ...ca, createdAt: deps.now().toISOString() }))
  ) {
    return ensureNetworkCa(deps);
  }
  const [rootKey, signingKey] = await Promise.all([
    deps.signers.rootCa.publicKey(),
    deps.signers.signingCa.publicKey(),
  ]);
  if (!samePublicKey(ca.rootCertPem, rootKey) || !samePublicKey(ca.signingCertPem, signingKey)) {
    throw new Error('the stored network CA was made with other keys than the configured root and signing CA keys');
  }
  loaded.set(deps.store, Promise.resolve(ca));
  return ca;
}

/** The stored network CA, read once per store (cold start) and kept: it never changes once built. */
export function networkCa(deps: Deps): Promise<NetworkCa> {
  let ca = loaded.get(deps.store);
  if (!ca) {
    ca = readNetworkCa(deps).then((found) => {
      if (!found) throw new Error('the network CA has not been built: run the bootstrap');
      return found;
    });
    ca.catch(() => loaded.delete(deps.store));
    loaded.set(deps.store, ca);
  }
  return ca;
}

/** The CA certificates clients trust, root first, as a PKCS#7 certs-only bundle (DER). */
export async function caBundleDer(ca: NetworkCa): Promise<ArrayBuffer> {
  const x509 = await x509Module();
  return new x509.X509Certificates([
    new x509.X509Certificate(ca.rootCertPem),
    new x509.X509Certificate(ca.signingCertPem),
  ]).export('raw');
}
