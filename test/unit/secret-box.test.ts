import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { createSecretBox } from '#shared/mfa/create-secret-box.ts';
import { fileSecretBox, kmsSecretBox, memorySecretBox } from '#shared/mfa/secret-box.ts';
import { type KmsDouble, kmsClientFor, startKmsDouble } from '../support/kms-double.ts';

let kms: KmsDouble;
let client: KMSClient;

beforeAll(async () => {
  kms = await startKmsDouble();
  kms.addSymmetricKey('secrets-key');
  kms.addSymmetricKey('other-key');
  client = kmsClientFor(kms);
});
afterAll(async () => {
  client.destroy();
  await kms.close();
});

const SECRET = new TextEncoder().encode('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP');

describe('the KMS secret box through @aws-sdk/client-kms', () => {
  it('seals with one GenerateDataKey and opens with one Decrypt, bound to its owner and its key', async () => {
    const box = kmsSecretBox(client, 'secrets-key');
    const before = { generate: kms.count('GenerateDataKey'), decrypt: kms.count('Decrypt') };

    const sealed = await box.seal(SECRET, 'identity-1');
    expect(kms.count('GenerateDataKey') - before.generate).toBe(1);
    expect(sealed).toMatch(/^kms:/);
    expect(sealed).not.toContain(Buffer.from(SECRET).toString('base64'));
    expect(await box.open(sealed, 'identity-1')).toEqual(SECRET);
    expect(kms.count('Decrypt') - before.decrypt).toBe(1);

    await expect(box.open(sealed, 'identity-2')).rejects.toThrow();
    await expect(kmsSecretBox(client, 'other-key').open(sealed, 'identity-1')).rejects.toThrow();
    const request = kms.calls.findLast((call) => call.action === 'GenerateDataKey');
    expect(request?.body).toMatchObject({
      KeyId: 'secrets-key',
      KeySpec: 'AES_256',
      EncryptionContext: { owner: 'identity-1' },
    });
  });

  it('refuses a sealed value of the other kind, or truncated', async () => {
    const box = kmsSecretBox(client, 'secrets-key');
    await expect(box.open(await memorySecretBox().seal(SECRET, 'x'), 'x')).rejects.toThrow(/not a KMS sealed/);
    await expect(box.open('kms:AAAA:AAAA', 'x')).rejects.toThrow();
  });
});

describe('the local secret box', () => {
  it('keeps its key in a 0600 file that a restart reads again', async () => {
    const directory = join(mkdtempSync(join(tmpdir(), 'secret-box-')), 'pki');
    const sealed = await fileSecretBox(directory).seal(SECRET, 'identity-1');
    expect(statSync(join(directory, 'mfa-secrets.key')).mode & 0o777).toBe(0o600);
    expect(await fileSecretBox(directory).open(sealed, 'identity-1')).toEqual(SECRET);
    await expect(fileSecretBox(directory).open(sealed, 'identity-2')).rejects.toThrow();
    await expect(memorySecretBox().open(sealed, 'identity-1')).rejects.toThrow();
  });

  it('is chosen by the configuration, and refuses where the stack gives no key', async () => {
    expect(loadConfig({ SECRET_KEY_ID: 'k' }).secretKey).toEqual({ kind: 'kms', keyId: 'k' });
    expect(loadConfig({ PKI_KEY_DIR: '/d' }).secretKey).toEqual({ kind: 'files', directory: '/d' });
    expect(loadConfig({}).secretKey).toEqual({ kind: 'memory' });
    const none = createSecretBox(loadConfig({ AWS_LAMBDA_FUNCTION_NAME: 'f' }));
    await expect(none.seal(SECRET, 'x')).rejects.toThrow(/no secret key/);
  });
});
