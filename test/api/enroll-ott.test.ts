import { execFileSync } from 'node:child_process';
import { webcrypto, X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { countSigns } from '../support/count-signs.ts';

const { controller, call, createdId } = useAdminController();
let signingCaSigns: ReturnType<typeof countSigns>;
const C = '/edge/client/v1';

beforeAll(() => {
  signingCaSigns = countSigns(controller().deps.signers.signingCa);
});

/** A key pair and a PEM CSR for it, as an enrolling SDK makes them. */
async function csrFor(algorithm: { name: string; namedCurve?: string; hash: string }, cn = 'device') {
  const params =
    algorithm.name === 'ECDSA'
      ? algorithm
      : { ...algorithm, modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]) };
  const keys = (await webcrypto.subtle.generateKey(params as never, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create(
    { name: `C=US, O=NetFoundry, CN=${cn}`, keys, signingAlgorithm: algorithm },
    webcrypto as never,
  );
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { csr: csr.toString('pem'), key: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY') };
}

const P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

async function identityWithOtt(name: string): Promise<{ id: string; token: string }> {
  const id = await createdId('/identities', { name, type: 'Device', isAdmin: false, enrollment: { ott: true } });
  const detail = await call('GET', `/identities/${id}`);
  return { id, token: detail.body.data.enrollment.ott.token };
}

function openssl(...args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('ott enrollment', () => {
  it('issues a client certificate the network CA chain verifies, and the identity logs in with it', async () => {
    const { id, token } = await identityWithOtt('ott-device');
    const { csr, key } = await csrFor(P256);
    const before = signingCaSigns.count();

    const response = await controller().call('POST', `${C}/enroll?method=ott&token=${token}`, {
      rawBody: csr,
      headers: { 'content-type': 'application/x-pem-file' },
    });

    expect(response.status, response.text).toBe(200);
    expect(signingCaSigns.count() - before).toBe(1);
    expectMatchesSpec('client', 'POST', '/enroll', 200, response.body);
    const [leafPem] = response.body.data.cert.split(/(?<=-----END CERTIFICATE-----)\s*/);
    const cacerts = await controller().call('GET', `${C}/.well-known/est/cacerts`);
    const [root, signing] = [...new x509.X509Certificates(Buffer.from(cacerts.text, 'base64'))];
    const dir = mkdtempSync(join(tmpdir(), 'enroll-'));
    writeFileSync(join(dir, 'root.pem'), root!.toString('pem'));
    writeFileSync(join(dir, 'signing.pem'), signing!.toString('pem'));
    writeFileSync(join(dir, 'leaf.pem'), leafPem);
    expect(
      openssl(
        'verify',
        '-CAfile',
        join(dir, 'root.pem'),
        '-untrusted',
        join(dir, 'signing.pem'),
        '-purpose',
        'sslclient',
        join(dir, 'leaf.pem'),
      ),
    ).toContain('OK');

    const identity = await call('GET', `/identities/${id}`);
    const fingerprint = new X509Certificate(leafPem).fingerprint.replaceAll(':', '').toLowerCase();
    expect(identity.body.data.enrollment).toEqual({});
    expect(identity.body.data.authenticators.cert.fingerprint).toBe(fingerprint);
    const login = await controller().call('POST', `${C}/authenticate?method=cert`, {
      body: {},
      cert: { key, cert: leafPem },
    });
    expect(login.status, login.text).toBe(200);
    expect(login.body.data.identityId).toBe(id);
  });

  it('takes the JSON form at /enroll/ott, and a token works once', async () => {
    const { token } = await identityWithOtt('ott-json');
    const { csr } = await csrFor({ name: 'ECDSA', namedCurve: 'P-384', hash: 'SHA-384' });

    const first = await controller().call('POST', `${C}/enroll/ott`, { body: { token, clientCsr: csr } });
    const replay = await controller().call('POST', `${C}/enroll/ott`, { body: { token, clientCsr: csr } });

    expect(first.status, first.text).toBe(200);
    expectMatchesSpec('client', 'POST', '/enroll/ott', 200, first.body);
    expect(replay.status).toBe(400);
    expect(replay.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
  });

  it('refuses bad tokens, expired enrollments, other methods and unusable CSRs with their codes, writing nothing', async () => {
    const { id, token } = await identityWithOtt('ott-refusals');
    const { csr } = await csrFor(P256);
    const weak = await csrFor({ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' });
    const pem = { 'content-type': 'application/x-pem-file' };
    const cases: [string, string | undefined, string][] = [
      [`${C}/enroll?method=ott&token=not-a-uuid`, csr, 'INVALID_ENROLLMENT_TOKEN'],
      [`${C}/enroll?method=ott&token=${crypto.randomUUID()}`, csr, 'INVALID_ENROLLMENT_TOKEN'],
      [`${C}/enroll?method=ott`, csr, 'INVALID_ENROLLMENT_TOKEN'],
      [`${C}/enroll?method=bogus&token=${token}`, csr, 'INVALID_ENROLL_METHOD'],
      [`${C}/enroll?method=ott&token=${token}`, 'garbage', 'COULD_NOT_PROCESS_CSR'],
      [`${C}/enroll?method=ott&token=${token}`, (await csrFor(P256)).key, 'COULD_NOT_PROCESS_CSR'],
      [`${C}/enroll?method=ott&token=${token}`, weak.csr, 'COULD_NOT_PROCESS_CSR'],
      [`${C}/enroll?method=ott&token=${token}`, undefined, 'COULD_NOT_PROCESS_CSR'],
    ];

    for (const [path, body, code] of cases) {
      const response = await controller().call('POST', path, body === undefined ? {} : { rawBody: body, headers: pem });
      expect(response.status, `${path} ${response.text}`).toBe(400);
      expect(response.body.error.code, path).toBe(code);
    }
    controller().advanceClock(181 * 60_000);
    const expired = await controller().call('POST', `${C}/enroll?token=${token}`, { rawBody: csr, headers: pem });
    controller().advanceClock(-181 * 60_000);

    expect(expired.status).toBe(400);
    expect(expired.body.error.code).toBe('ENROLLMENT_EXPIRED');
    const identity = await call('GET', `/identities/${id}`);
    expect(identity.body.data.authenticators).toEqual({});
    expect(identity.body.data.enrollment.ott.token).toBe(token);
  });
});
