import { webcrypto } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

export interface TlsMaterial {
  readonly key: string;
  readonly cert: string;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/**
 * A self-signed P-256 certificate for localhost, valid for a year: for test peers (an identity provider's JWKS
 * endpoint, a stray client certificate). The controller itself serves a certificate from its network CA
 * (`server-tls.ts`).
 */
export async function createServerCertificate(hostnames: readonly string[] = ['localhost']): Promise<TlsMaterial> {
  x509.cryptoProvider.set(globalThis.crypto);
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
      .toString('hex')
      .replace(/^[89a-f]/, '1'),
    name: 'CN=localhost, O=Ziti serverless controller (local)',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * 24 * 3600_000),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...hostnames.map((value) => ({ type: 'dns' as const, value })),
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  const key = x509.PemConverter.encode(pkcs8, 'PRIVATE KEY');
  return { key, cert: cert.toString('pem') };
}
