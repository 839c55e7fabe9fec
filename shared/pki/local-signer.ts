import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerKey } from '../ports/signer.ts';

/** A Signer over a P-256 private key held by this process: `npm start`, the tests, and the server key in AWS. */
export function localSigner(name: string, privateKey: () => KeyObject): ServerKey {
  let key: KeyObject | undefined;
  const held = () => {
    key ??= privateKey();
    return key;
  };
  return {
    keyId: `local:${name}`,
    sign: async (data) => new Uint8Array(sign('sha256', data, { key: held(), dsaEncoding: 'ieee-p1363' })),
    publicKey: async () => createPublicKey(held()),
    privateKeyPem: async () => String(held().export({ format: 'pem', type: 'pkcs8' })),
  };
}

function newP256Key(): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}

/** A key made on first use and gone with the process (tests). */
export function memorySigner(name: string): ServerKey {
  return localSigner(name, newP256Key);
}

/**
 * The key kept in `<directory>/<name>.pem` (PKCS#8, mode 0600): made on first start, read on every later one, so the
 * CA certificates and the JWTs already issued stay valid across restarts. A start that races another one keeps the
 * file the other wrote.
 */
export function fileSigner(directory: string, name: string, formerName?: string): ServerKey {
  return localSigner(name, () => {
    const file = join(directory, `${name}.pem`);
    // A key kept under its former name (the enrollment JWT key became the server key) is the same key.
    for (const candidate of [file, ...(formerName ? [join(directory, `${formerName}.pem`)] : [])]) {
      try {
        return createPrivateKey(readFileSync(candidate, 'utf8'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    const key = newP256Key();
    try {
      writeFileSync(file, key.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' });
      return key;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return createPrivateKey(readFileSync(file, 'utf8'));
    }
  });
}
