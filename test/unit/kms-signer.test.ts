import { createPublicKey, generateKeyPairSync, sign, verify, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { derToRawSignature, MalformedSignatureError } from '#shared/pki/ecdsa-signature.ts';
import { publicJwk, signJwt } from '#shared/pki/enrollment-jwt.ts';
import { kmsSigner } from '#shared/pki/kms-signer.ts';
import { fileSigner, memorySigner } from '#shared/pki/local-signer.ts';
import { buildNetworkCa } from '#shared/pki/network-ca.ts';
import { createSigners } from '#shared/pki/signers.ts';
import { type KmsDouble, kmsClientFor, startKmsDouble } from '../support/kms-double.ts';

let kms: KmsDouble;
let client: KMSClient;

beforeAll(async () => {
  kms = await startKmsDouble();
  client = kmsClientFor(kms);
});
afterAll(async () => {
  client.destroy();
  await kms.close();
});

/** A raw r‖s signature verified by node:crypto against the key's public half. */
function verifies(publicKey: Parameters<typeof verify>[2], data: Uint8Array, raw: Uint8Array): boolean {
  return verify('sha256', data, { key: publicKey as never, dsaEncoding: 'ieee-p1363' }, raw);
}

describe('the KMS signer through @aws-sdk/client-kms', () => {
  it('signs a digest with one Sign call and answers raw r‖s that verifies over the data', async () => {
    const privateKey = kms.addKey('key-sign');
    const signer = kmsSigner(client, 'key-sign');
    const data = new TextEncoder().encode('the data to sign');
    const before = kms.count('Sign');

    const signature = await signer.sign(data);

    expect(kms.count('Sign') - before).toBe(1);
    expect(signature).toHaveLength(64);
    expect(verifies(createPublicKey(privateKey), data, signature)).toBe(true);
    const request = kms.calls.at(-1)!.body;
    expect(request).toMatchObject({ KeyId: 'key-sign', MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' });
    expect(Buffer.from(String(request.Message), 'base64')).toHaveLength(32);
  });

  it('converts every DER signature KMS answers, whatever the width of r and s', async () => {
    const privateKey = kms.addKey('key-many');
    const signer = kmsSigner(client, 'key-many');
    const publicKey = createPublicKey(privateKey);

    for (let i = 0; i < 40; i++) {
      const data = new TextEncoder().encode(`message ${i}`);
      expect(verifies(publicKey, data, await signer.sign(data))).toBe(true);
    }
  });

  it('fetches the public key once and serves it afterwards', async () => {
    const privateKey = kms.addKey('key-public');
    const signer = kmsSigner(client, 'key-public');
    const before = kms.count('GetPublicKey');

    const first = await signer.publicKey();
    const second = await signer.publicKey();

    expect(kms.count('GetPublicKey') - before).toBe(1);
    expect(first.export({ format: 'jwk' })).toEqual(createPublicKey(privateKey).export({ format: 'jwk' }));
    expect(second).toBe(first);
  });

  it('fails on an unknown key and asks again next time', async () => {
    const signer = kmsSigner(client, 'key-missing');

    await expect(signer.publicKey()).rejects.toThrow(/does not exist/);
    kms.addKey('key-missing');
    await expect(signer.publicKey()).resolves.toBeDefined();
  });
});

describe('the PKI on KMS keys', () => {
  it('builds the network CA with one Sign per certificate, a chain that verifies', async () => {
    kms.addKey('root-ca');
    kms.addKey('signing-ca');
    const signers = {
      rootCa: kmsSigner(client, 'root-ca'),
      signingCa: kmsSigner(client, 'signing-ca'),
      server: memorySigner('server'),
    };
    const before = kms.count('Sign');

    const ca = await buildNetworkCa(signers, new Date());

    expect(kms.count('Sign') - before).toBe(2);
    const root = new X509Certificate(ca.rootCertPem);
    const signing = new X509Certificate(ca.signingCertPem);
    expect(root.verify(root.publicKey)).toBe(true);
    expect(signing.verify(root.publicKey)).toBe(true);
    expect(signing.publicKey.equals(await signers.signingCa.publicKey())).toBe(true);
  });

  it('signs a JWT with one Sign that jose verifies against the JWKS', async () => {
    kms.addKey('enrollment');
    const signer = kmsSigner(client, 'enrollment');
    const before = kms.count('Sign');

    const jwt = await signJwt(signer, { sub: 'someone', em: 'ott' });

    expect(kms.count('Sign') - before).toBe(1);
    const { payload } = await jwtVerify(jwt, createLocalJWKSet({ keys: [await publicJwk(signer)] }));
    expect(payload).toEqual({ sub: 'someone', em: 'ott' });
  });
});

describe('DER to raw ECDSA signatures', () => {
  const der = (r: number[], s: number[]) =>
    Uint8Array.from([0x30, r.length + s.length + 4, 0x02, r.length, ...r, 0x02, s.length, ...s]);

  it('pads short integers and drops the sign byte of long ones', () => {
    const r = [0x00, 0x80, ...Array<number>(31).fill(1)];
    const s = Array<number>(31).fill(2);

    const raw = derToRawSignature(der(r, s));

    expect([...raw.subarray(0, 32)]).toEqual([0x80, ...Array<number>(31).fill(1)]);
    expect([...raw.subarray(32)]).toEqual([0, ...Array<number>(31).fill(2)]);
  });

  it('matches what node:crypto makes of its own DER signatures', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    for (let i = 0; i < 20; i++) {
      const data = Buffer.from(`data ${i}`);
      const raw = derToRawSignature(sign('sha256', data, privateKey));
      expect(verify('sha256', data, { key: createPublicKey(privateKey), dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
    }
  });

  it('refuses what is not a signature', () => {
    const bad = [
      Uint8Array.from([]),
      Uint8Array.from([0x31, 0x00]),
      Uint8Array.from([0x30, 0x05, 0x02, 0x01, 0x01]),
      der([0x80], [0x01]),
      der(Array<number>(34).fill(1), [0x01]),
      Uint8Array.from([...der([0x01], [0x01]), 0x00]),
      Uint8Array.from([0x30, 0x06, 0x04, 0x01, 0x01, 0x02, 0x01, 0x01]),
      Uint8Array.from([0x30, 0x83, 0x00, 0x00, 0x06]),
    ];
    for (const input of bad) expect(() => derToRawSignature(input)).toThrow(MalformedSignatureError);
  });
});

describe('the local signer', () => {
  it('makes its key once in the data directory, mode 0600, and reuses it after a restart', async () => {
    const directory = join(mkdtempSync(join(tmpdir(), 'pki-')), 'pki');
    const data = Buffer.from('data');

    const first = fileSigner(directory, 'enrollment');
    const signature = await first.sign(data);
    const restarted = fileSigner(directory, 'enrollment');

    expect(statSync(join(directory, 'enrollment.pem')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(directory, 'enrollment.pem'), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(verifies(await restarted.publicKey(), data, signature)).toBe(true);
  });
});

describe('which signers a function gets', () => {
  it('uses KMS for the keys the stack named, and refuses to sign with the others', async () => {
    const signers = createSigners(
      loadConfig({
        SIGNING_CA_KEY_ID: 'signing-key',
        SERVER_KEY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:server',
        AWS_REGION: 'eu-west-1',
      }),
    );

    expect(signers.signingCa.keyId).toBe('signing-key');
    expect(signers.server.keyId).toBe('secret:arn:aws:secretsmanager:eu-west-1:1:secret:server');
    await expect(signers.rootCa.sign(new Uint8Array(1))).rejects.toThrow(/no rootCa key/);
  });

  it('never makes a throwaway key inside Lambda, and keeps keys in memory for tests or in files when told', async () => {
    const lambda = createSigners(loadConfig({ AWS_LAMBDA_FUNCTION_NAME: 'fn' }));
    const files = loadConfig({ PKI_KEY_DIR: '/tmp/keys' });

    await expect(lambda.server.publicKey()).rejects.toThrow(/no server key/);
    expect(files.pkiKeys).toEqual({ kind: 'files', directory: '/tmp/keys' });
    expect(loadConfig({}).pkiKeys).toEqual({ kind: 'memory' });
  });
});
