import { execFileSync } from 'node:child_process';
import { createPublicKey, verify, X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { calculateJwkThumbprint, createLocalJWKSet, type JWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { bootstrap } from '#shared/bootstrap.ts';
import { memorySigner } from '#shared/pki/local-signer.ts';
import { networkCa } from '#shared/pki/network-ca.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { countSigns } from '../support/count-signs.ts';
import { asTableUser } from '../support/table-grants.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';
import { useTestController } from '../support/use-controller.ts';

const controller = useTestController();
const C = '/edge/client/v1';
const M = '/edge/management/v1';

/** The certificates of a base64 PKCS#7 certs-only answer, in order. */
function certificatesOf(base64: string): x509.X509Certificate[] {
  return [...new x509.X509Certificates(Buffer.from(base64, 'base64'))];
}

function openssl(...args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

async function jwks(): Promise<{ keys: (JWK & { kid: string })[] }> {
  const response = await controller().call('GET', `${C}/enroll/jwks`);
  expect(response.status).toBe(200);
  return response.body;
}

describe('GET /.well-known/est/cacerts', () => {
  it('answers the root and signing CA as base64 PKCS#7 on both APIs, a chain openssl verifies', async () => {
    const client = await controller().call('GET', `${C}/.well-known/est/cacerts`);
    const management = await controller().call('GET', `${M}/.well-known/est/cacerts`);

    expect(client.status).toBe(200);
    expect(client.headers['content-type']).toBe('application/pkcs7-mime');
    expect(management.text).toBe(client.text);
    const [root, signing] = certificatesOf(client.text);
    expect(root!.subject).toBe(root!.issuer);
    expect(signing!.issuer).toBe(root!.subject);
    const dir = mkdtempSync(join(tmpdir(), 'cacerts-'));
    writeFileSync(join(dir, 'root.pem'), root!.toString('pem'));
    writeFileSync(join(dir, 'signing.pem'), signing!.toString('pem'));
    writeFileSync(join(dir, 'bundle.p7b'), Buffer.from(client.text, 'base64'));
    expect(openssl('verify', '-CAfile', join(dir, 'root.pem'), join(dir, 'signing.pem'))).toContain('OK');
    expect(openssl('pkcs7', '-inform', 'DER', '-in', join(dir, 'bundle.p7b'), '-print_certs')).toContain('Signing CA');
  });

  it('makes the CAs with the configured keys: CA flags, key usages, the signing CA under the root only', async () => {
    const ca = await networkCa(controller().deps);
    const root = new X509Certificate(ca.rootCertPem);
    const signing = new X509Certificate(ca.signingCertPem);

    expect(root.ca && signing.ca).toBe(true);
    expect(root.publicKey.equals(await controller().deps.signers.rootCa.publicKey())).toBe(true);
    expect(signing.publicKey.equals(await controller().deps.signers.signingCa.publicKey())).toBe(true);
    expect(root.verify(root.publicKey)).toBe(true);
    expect(signing.verify(root.publicKey)).toBe(true);
    expect(new Date(root.validTo).getTime() - Date.now()).toBeGreaterThan(19 * 365 * 24 * 3600_000);
  });

  it('keeps the CA built at the first bootstrap on later ones, and refuses keys it was not made with', async () => {
    const before = await networkCa(controller().deps);

    await asTableUser('bootstrap', () =>
      bootstrap(controller().deps, { adminUsername: ADMIN_USERNAME, adminPassword: ADMIN_PASSWORD }),
    );
    const response = await controller().call('GET', `${C}/.well-known/est/cacerts`);
    const otherKeys = {
      ...controller().deps,
      signers: { ...controller().deps.signers, signingCa: memorySigner('another-signing-ca') },
    };

    expect(certificatesOf(response.text).map((cert) => cert.toString('pem'))).toEqual([
      new x509.X509Certificate(before.rootCertPem).toString('pem'),
      new x509.X509Certificate(before.signingCertPem).toString('pem'),
    ]);
    await expect(
      asTableUser('bootstrap', () =>
        bootstrap(otherKeys, { adminUsername: ADMIN_USERNAME, adminPassword: ADMIN_PASSWORD }),
      ),
    ).rejects.toThrow(/other keys/);
  });
});

describe('GET /enroll/jwks', () => {
  it('lists the enrollment key as a P-256 JWK whose kid is its thumbprint, no private part', async () => {
    const { keys } = await jwks();

    expect(keys).toHaveLength(1);
    const [key] = keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(key!.d).toBeUndefined();
    expect(key!.kid).toBe(await calculateJwkThumbprint(key!));
    const enrollmentKey = await controller().deps.signers.server.publicKey();
    expect(createPublicKey({ key: key as never, format: 'jwk' }).equals(enrollmentKey)).toBe(true);
    expectMatchesSpec('client', 'GET', '/enroll/jwks', 200, { keys });
  });
});

describe('POST /enroll/challenge', () => {
  it('signs the nonce with the key the JWKS names', async () => {
    const { keys } = await jwks();
    const nonce = crypto.randomUUID();

    const response = await controller().call('POST', `${C}/enroll/challenge`, { body: { keyId: keys[0]!.kid, nonce } });

    expect(response.status).toBe(200);
    expectMatchesSpec('client', 'POST', '/enroll/challenge', 200, response.body);
    expect(response.body).toMatchObject({ algorithm: 'ES256', kid: keys[0]!.kid });
    const signature = Buffer.from(response.body.signature, 'base64url');
    const publicKey = createPublicKey({ key: keys[0] as never, format: 'jwk' });
    expect(verify('sha256', Buffer.from(nonce), { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(true);
    const ca = await networkCa(controller().deps);
    expect(response.body.caPool).toContain(ca.rootCertPem.trim());
    expect(response.body.caPool).toContain(ca.signingCertPem.trim());
  });

  it('refuses a nonce that is not a uuid, an unknown key and missing fields, naming the field', async () => {
    const { keys } = await jwks();
    const kid = keys[0]!.kid;
    const cases: [unknown, string][] = [
      [{ keyId: kid, nonce: 'not-a-uuid' }, 'nonce'],
      [{ keyId: 'unknown-kid', nonce: crypto.randomUUID() }, 'keyId'],
      [{ nonce: crypto.randomUUID() }, 'keyId'],
      [{ keyId: kid }, 'nonce'],
    ];

    for (const [body, field] of cases) {
      const response = await controller().call('POST', `${C}/enroll/challenge`, { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('COULD_NOT_VALIDATE');
      expect(response.body.error.cause.field).toBe(field);
    }
  });

  it('refuses a 500 KB keyId in a small answer that still names the field and how the value began', async () => {
    const keyId = `kid-${'k'.repeat(500_000)}`;

    const response = await controller().call('POST', `${C}/enroll/challenge`, {
      body: { keyId, nonce: crypto.randomUUID() },
    });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('COULD_NOT_VALIDATE');
    expect(response.raw.length).toBeLessThan(2_000);
    const { field, reason, value } = response.body.error.cause;
    expect(field).toBe('keyId');
    expect(reason).toMatch(/^no enrollment key has the id kid-k+…\(\d+ more characters\)$/);
    expect(value).toBe(`${keyId.slice(0, 256)}…(${keyId.length - 256} more characters)`);
  });
});

describe('GET /network-jwts', () => {
  it('answers the network JWT on both APIs, verifiable with the JWKS, signed once', async () => {
    const keySet = createLocalJWKSet(await jwks());

    const client = await controller().call('GET', `${C}/network-jwts`);
    const management = await controller().call('GET', `${M}/network-jwts`);

    expect(client.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/network-jwts', 200, client.body);
    expectMatchesSpec('management', 'GET', '/network-jwts', 200, management.body);
    const [entry] = client.body.data;
    expect(management.body.data[0].token).toBe(entry.token);
    const { payload, protectedHeader } = await jwtVerify(entry.token, keySet, {
      issuer: `${controller().origin}/`,
      audience: 'openziti-enroller',
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    expect(payload).toMatchObject({ em: 'network', sub: `${controller().origin}/` });
    expect(payload.exp).toBeUndefined();
  });

  it('signs for this server only: a flood of made-up Host headers costs no signature', async () => {
    await controller().call('GET', `${C}/network-jwts`);
    const signs = countSigns(controller().deps.signers.server);
    const keySet = createLocalJWKSet(await jwks());
    for (let i = 0; i < 20; i++) {
      const response = await controller().call('GET', `${C}/network-jwts`, {
        headers: { host: `made-up-${i}.example` },
      });
      expect(response.status).toBe(200);
      const { payload } = await jwtVerify(response.body.data[0].token, keySet);
      expect(payload.iss).toBe(`${controller().origin}/`);
    }
    expect(signs.count()).toBe(0);
  });
});
