import {
  createCipheriv,
  createDecipheriv,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KMSClient } from '@aws-sdk/client-kms';

/**
 * A loopback stand-in for KMS speaking its JSON protocol (`X-Amz-Target: TrentService.<Action>`), enough for the
 * signer: `GetPublicKey` and `Sign` with `MessageType: DIGEST` and `ECDSA_SHA_256`, on P-256 keys made with
 * node:crypto. node:crypto cannot sign a digest it did not compute, so the double does the ECDSA arithmetic of a
 * pre-hashed message itself (as KMS does) and answers DER, as KMS does; the tests verify every signature with
 * node:crypto over the original data.
 */
export interface KmsDouble {
  readonly endpoint: string;
  /** Every `TrentService` action received, in order. */
  readonly calls: { action: string; body: Record<string, unknown> }[];
  addKey(keyId: string): KeyObject;
  /** A symmetric key for `GenerateDataKey` and `Decrypt` (envelope encryption). */
  addSymmetricKey(keyId: string): void;
  count(action: string): number;
  close(): Promise<void>;
}

const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const A = P - 3n;
const G = {
  x: 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n,
  y: 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n,
};

const mod = (a: bigint, m: bigint) => ((a % m) + m) % m;

function inverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [mod(a, m), m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return mod(oldS, m);
}

type Jacobian = { x: bigint; y: bigint; z: bigint };

function double({ x, y, z }: Jacobian): Jacobian {
  if (y === 0n || z === 0n) return { x: 0n, y: 1n, z: 0n };
  const ysq = mod(y * y, P);
  const s = mod(4n * x * ysq, P);
  const m = mod(3n * x * x + A * z ** 4n, P);
  const nx = mod(m * m - 2n * s, P);
  return { x: nx, y: mod(m * (s - nx) - 8n * ysq * ysq, P), z: mod(2n * y * z, P) };
}

function add(p: Jacobian, q: Jacobian): Jacobian {
  if (p.z === 0n) return q;
  if (q.z === 0n) return p;
  const u1 = mod(p.x * q.z ** 2n, P);
  const u2 = mod(q.x * p.z ** 2n, P);
  const s1 = mod(p.y * q.z ** 3n, P);
  const s2 = mod(q.y * p.z ** 3n, P);
  if (u1 === u2) return s1 === s2 ? double(p) : { x: 0n, y: 1n, z: 0n };
  const h = u2 - u1;
  const r = s2 - s1;
  const nx = mod(r * r - h ** 3n - 2n * u1 * h * h, P);
  return { x: nx, y: mod(r * (u1 * h * h - nx) - s1 * h ** 3n, P), z: mod(h * p.z * q.z, P) };
}

function multiplyG(k: bigint): bigint {
  let result: Jacobian = { x: 0n, y: 1n, z: 0n };
  let point: Jacobian = { ...G, z: 1n };
  for (let e = k; e > 0n; e >>= 1n) {
    if (e & 1n) result = add(result, point);
    point = double(point);
  }
  return mod(result.x * inverse(result.z ** 2n, P), P);
}

const toBigInt = (bytes: Uint8Array) => BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);

function derInteger(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if (bytes[0]! & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
}

/** ECDSA over a SHA-256 digest (FIPS 186-4), answered as DER `SEQUENCE { r, s }` with minimal integers. */
function signDigest(privateKey: KeyObject, digest: Uint8Array): Buffer {
  const d = toBigInt(Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url'));
  const z = toBigInt(digest);
  for (;;) {
    const k = mod(toBigInt(randomBytes(40)), N - 1n) + 1n;
    const r = mod(multiplyG(k), N);
    const s = mod(inverse(k, N) * (z + r * d), N);
    if (r === 0n || s === 0n) continue;
    const body = Buffer.concat([derInteger(r), derInteger(s)]);
    return Buffer.concat([Buffer.from([0x30, body.length]), body]);
  }
}

function kmsError(type: string, message: string) {
  return { status: 400, body: { __type: type, message } };
}

export async function startKmsDouble(): Promise<KmsDouble> {
  const keys = new Map<string, KeyObject>();
  const calls: KmsDouble['calls'] = [];

  const answer = (action: string, body: Record<string, unknown>) => {
    if (action === 'GenerateDataKey' || action === 'Decrypt') return dataKeys(action, body);
    const key = keys.get(String(body.KeyId));
    if (!key) return kmsError('NotFoundException', `Key '${String(body.KeyId)}' does not exist`);
    if (action === 'GetPublicKey') {
      const publicKey = createPublicKey(key).export({ format: 'der', type: 'spki' });
      return {
        status: 200,
        body: {
          KeyId: body.KeyId,
          PublicKey: publicKey.toString('base64'),
          KeySpec: 'ECC_NIST_P256',
          KeyUsage: 'SIGN_VERIFY',
          SigningAlgorithms: ['ECDSA_SHA_256'],
        },
      };
    }
    if (action === 'Sign') {
      const digest = Buffer.from(String(body.Message), 'base64');
      if (body.MessageType !== 'DIGEST' || body.SigningAlgorithm !== 'ECDSA_SHA_256' || digest.length !== 32) {
        return kmsError('ValidationException', 'expected a 32-byte DIGEST with ECDSA_SHA_256');
      }
      return {
        status: 200,
        body: {
          KeyId: body.KeyId,
          Signature: signDigest(key, digest).toString('base64'),
          SigningAlgorithm: 'ECDSA_SHA_256',
        },
      };
    }
    return kmsError('UnsupportedOperationException', action);
  };

  // Symmetric keys: a data key is "encrypted" as AES-256-GCM under the key's material with the encryption context
  // as associated data, so Decrypt refuses another context or another key, as KMS does.
  const symmetric = new Map<string, Buffer>();
  const contextOf = (body: Record<string, unknown>) =>
    JSON.stringify(Object.entries((body.EncryptionContext ?? {}) as Record<string, string>).sort());
  const dataKeys = (action: string, body: Record<string, unknown>) => {
    const material = symmetric.get(String(body.KeyId));
    if (!material) return kmsError('NotFoundException', `Key '${String(body.KeyId)}' does not exist`);
    if (action === 'GenerateDataKey') {
      if (body.KeySpec !== 'AES_256') return kmsError('ValidationException', 'expected KeySpec AES_256');
      const plaintext = randomBytes(32);
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', material, iv).setAAD(Buffer.from(contextOf(body)));
      const blob = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
      return {
        status: 200,
        body: { KeyId: body.KeyId, Plaintext: plaintext.toString('base64'), CiphertextBlob: blob.toString('base64') },
      };
    }
    const blob = Buffer.from(String(body.CiphertextBlob), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', material, blob.subarray(0, 12)).setAAD(
        Buffer.from(contextOf(body)),
      );
      decipher.setAuthTag(blob.subarray(blob.length - 16));
      const plaintext = Buffer.concat([decipher.update(blob.subarray(12, -16)), decipher.final()]);
      return { status: 200, body: { KeyId: body.KeyId, Plaintext: plaintext.toString('base64') } };
    } catch {
      return kmsError('InvalidCiphertextException', 'the ciphertext does not decrypt under this key and context');
    }
  };

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const action = String(request.headers['x-amz-target'] ?? '').replace(/^TrentService\./, '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      calls.push({ action, body });
      const { status, body: reply } = answer(action, body);
      response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    addKey(keyId) {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      keys.set(keyId, privateKey);
      return privateKey;
    },
    addSymmetricKey(keyId) {
      symmetric.set(keyId, randomBytes(32));
    },
    count: (action) => calls.filter((call) => call.action === action).length,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The real KMS client, pointed at the double (no retries, test credentials). */
export function kmsClientFor(kms: KmsDouble): KMSClient {
  return new KMSClient({
    endpoint: kms.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
    maxAttempts: 1,
  });
}
