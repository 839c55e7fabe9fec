import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';
import { type ClientSource, clientOf } from '../ports/aws-client.ts';
import type { SecretBox } from '../ports/secret-box.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;

function encrypt(key: Uint8Array, plaintext: Uint8Array, context: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
}

function decrypt(key: Uint8Array, sealed: Buffer, context: string): Uint8Array {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error('sealed secret is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES)).setAAD(
    Buffer.from(context, 'utf8'),
  );
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return new Uint8Array(Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, -TAG_BYTES)), decipher.final()]));
}

/**
 * A box whose key-encryption key is held by this process: sealed as `local:<data key sealed>:<secret sealed>`, both
 * AES-256-GCM, so the format matches the KMS box's and only the key-encryption key's home differs.
 */
export function localSecretBox(masterKey: () => Uint8Array): SecretBox {
  return {
    async seal(plaintext, context) {
      const dataKey = randomBytes(32);
      const wrapped = encrypt(masterKey(), dataKey, context);
      return `local:${wrapped.toString('base64')}:${encrypt(dataKey, plaintext, context).toString('base64')}`;
    },
    async open(sealed, context) {
      const [kind, wrapped, body] = sealed.split(':');
      if (kind !== 'local' || !wrapped || !body) throw new Error('not a locally sealed secret');
      const dataKey = decrypt(masterKey(), Buffer.from(wrapped, 'base64'), context);
      return decrypt(dataKey, Buffer.from(body, 'base64'), context);
    },
  };
}

/** A box keyed by a key made on first use and gone with the process (tests). */
export function memorySecretBox(): SecretBox {
  const key = randomBytes(32);
  return localSecretBox(() => key);
}

/** The key kept in `<directory>/mfa-secrets.key` (mode 0600), made on first start as the PKI key files are. */
export function fileSecretBox(directory: string): SecretBox {
  let key: Uint8Array | undefined;
  return localSecretBox(() => {
    key ??= readOrCreateKey(join(directory, 'mfa-secrets.key'));
    return key;
  });
}

function readOrCreateKey(file: string): Uint8Array {
  try {
    return readKey(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another start wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readKey(file);
}

function readKey(file: string): Uint8Array {
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a 256-bit key`);
  return key;
}

/**
 * The AWS box: `GenerateDataKey` (AES_256) under a symmetric KMS key per seal, `Decrypt` of the data key per open;
 * the encryption context names the owner, so KMS refuses to unwrap a data key for another one (and logs who asked).
 */
export function kmsSecretBox(source: ClientSource<KMSClient>, keyId: string): SecretBox {
  const encryptionContext = (context: string) => ({ owner: context });
  return {
    async seal(plaintext, context) {
      const [client, { GenerateDataKeyCommand }] = await Promise.all([clientOf(source), import('@aws-sdk/client-kms')]);
      const { Plaintext, CiphertextBlob } = await client.send(
        new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: encryptionContext(context) }),
      );
      if (!Plaintext || !CiphertextBlob) throw new Error('KMS GenerateDataKey answered no key');
      try {
        const body = encrypt(Plaintext, plaintext, context);
        return `kms:${Buffer.from(CiphertextBlob).toString('base64')}:${body.toString('base64')}`;
      } finally {
        Plaintext.fill(0);
      }
    },
    async open(sealed, context) {
      const [kind, wrapped, body] = sealed.split(':');
      if (kind !== 'kms' || !wrapped || !body) throw new Error('not a KMS sealed secret');
      const [client, { DecryptCommand }] = await Promise.all([clientOf(source), import('@aws-sdk/client-kms')]);
      const { Plaintext } = await client.send(
        new DecryptCommand({
          KeyId: keyId,
          CiphertextBlob: Buffer.from(wrapped, 'base64'),
          EncryptionContext: encryptionContext(context),
        }),
      );
      if (!Plaintext) throw new Error('KMS Decrypt answered no key');
      try {
        return decrypt(Plaintext, Buffer.from(body, 'base64'), context);
      } finally {
        Plaintext.fill(0);
      }
    },
  };
}
