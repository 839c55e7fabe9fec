import { randomBytes, webcrypto } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/** Node's Web Crypto, typed as @peculiar/x509's provider parameter wants it. */
const crypto = webcrypto as never;
export const P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

async function keyPair(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(P256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

async function pkcs8Pem(key: webcrypto.CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/** A key pair and a PEM CSR for it, as an enrolling SDK makes them (`subject` replaces the SDK's usual one). */
export async function csrFor(cn = 'device', names?: x509.JsonGeneralNames, subject?: string) {
  const keys = await keyPair();
  const csr = await x509.Pkcs10CertificateRequestGenerator.create(
    {
      name: subject ?? `C=US, O=NetFoundry, CN=${cn}`,
      keys,
      signingAlgorithm: P256,
      ...(names ? { extensions: [new x509.SubjectAlternativeNameExtension(names)] } : {}),
    },
    crypto,
  );
  return { csr: csr.toString('pem'), key: await pkcs8Pem(keys.privateKey) };
}

/** A third-party CA: a self-signed CA certificate and its key, which issues certificates with {@link issue}. */
export interface TestCa {
  readonly cert: x509.X509Certificate;
  readonly pem: string;
  readonly keys: webcrypto.CryptoKeyPair;
}

/** A CA: self-signed, or an intermediate signed by `parent`. */
export async function makeCa(cn: string, parent?: TestCa): Promise<TestCa> {
  const keys = await keyPair();
  const validity = {
    serialNumber: randomBytes(8).toString('hex'),
    notBefore: new Date(Date.now() - 3600_000),
    notAfter: new Date(Date.now() + 10 * 365 * 24 * 3600_000),
    signingAlgorithm: P256,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  };
  const cert = parent
    ? await x509.X509CertificateGenerator.create(
        {
          ...validity,
          subject: `CN=${cn}`,
          issuer: parent.cert.subject,
          publicKey: keys.publicKey,
          signingKey: parent.keys.privateKey,
        },
        crypto,
      )
    : await x509.X509CertificateGenerator.createSelfSigned({ ...validity, name: `CN=${cn}`, keys }, crypto);
  return { cert, pem: cert.toString('pem'), keys };
}

/** A client certificate from `ca` with its key (PEM both), as a third-party PKI would hand a device. */
export async function issue(
  ca: TestCa,
  cn: string,
  options: { names?: x509.JsonGeneralNames; notAfter?: Date; clientAuth?: boolean; asCa?: boolean } = {},
) {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomBytes(8).toString('hex'),
      subject: `CN=${cn}`,
      issuer: ca.cert.subject,
      notBefore: new Date(Date.now() - 3600_000),
      notAfter: options.notAfter ?? new Date(Date.now() + 365 * 24 * 3600_000),
      publicKey: keys.publicKey,
      signingKey: ca.keys.privateKey,
      signingAlgorithm: P256,
      extensions: options.asCa
        ? [
            new x509.BasicConstraintsExtension(true, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
          ]
        : [
            new x509.BasicConstraintsExtension(false),
            ...(options.clientAuth === false
              ? [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth])]
              : [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])]),
            ...(options.names ? [new x509.SubjectAlternativeNameExtension(options.names)] : []),
          ],
    },
    crypto,
  );
  return { cert: cert.toString('pem'), key: await pkcs8Pem(keys.privateKey) };
}

/** The first certificate of a PEM chain. */
export function leafOf(chainPem: string): string {
  return chainPem.split(/(?<=-----END CERTIFICATE-----)\s*/)[0]!;
}
