import { execFileSync } from 'node:child_process';
import { randomUUID, X509Certificate } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { decodeJwt, jwtVerify } from 'jose';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { afterAll, describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { httpsCall } from '../support/https-client.ts';
import { csrFor, leafOf, makeCa } from '../support/pki-fixtures.ts';
import { startTestController, type TestController } from '../support/test-controller.ts';

/**
 * What the OpenZiti SDKs check before they trust a controller, reproduced without an SDK (C SDK
 * `library/ziti_enroll.c`): the enrollment JWT must verify with the public key of the certificate the TLS handshake
 * presents; the CA bundle fetched over that connection (`/.well-known/est/cacerts`, base64 PKCS#7 in 64-column lines)
 * is then the only trust for everything after; every response carries a stable `ziti-instance-id`.
 */

const C = '/edge/client/v1';
const { controller, call, createdId } = useAdminController();

/** The leaf certificate the controller presents in the TLS handshake, taken the way an SDK takes it: unverified. */
function presentedCertificate(origin: string): Promise<X509Certificate> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false }, () => {
      const certificate = socket.getPeerX509Certificate();
      socket.end();
      if (certificate) resolve(certificate);
      else reject(new Error('no certificate presented'));
    });
    socket.on('error', reject);
  });
}

/** The CA certificates of a cacerts answer, parsed from its base64 PKCS#7. */
function bundleOf(body: string): x509.X509Certificate[] {
  const der = Buffer.from(body.replace(/\s+/g, ''), 'base64');
  return [...new x509.X509Certificates(der)];
}

/** An SDK-style verification of a JWT: with the public key of the certificate its issuer presents. */
async function verifyAgainstPresentedKey(jwt: string) {
  const { iss } = decodeJwt(jwt);
  const presented = await presentedCertificate(String(iss));
  return jwtVerify(jwt, presented.publicKey);
}

describe('the controller an SDK meets', () => {
  it('signs the enrollment JWTs of identities, routers and CAs with the key of its TLS server certificate', async () => {
    const identity = await createdId('/identities', {
      name: 'sdk-ott',
      type: 'Device',
      isAdmin: false,
      enrollment: { ott: true },
    });
    const router = await createdId('/edge-routers', { name: 'sdk-router' });
    const transit = await createdId('/transit-routers', { name: 'sdk-transit' });
    const ca = await createdId('/cas', {
      name: 'sdk-ca',
      certPem: (await makeCa('sdk ca')).pem,
      isAutoCaEnrollmentEnabled: true,
      isOttCaEnrollmentEnabled: true,
      isAuthEnabled: true,
      identityRoles: [],
    });
    const jwts = [
      (await call('GET', `/identities/${identity}`)).body.data.enrollment.ott.jwt as string,
      (await call('GET', `/edge-routers/${router}`)).body.data.enrollmentJwt as string,
      (await call('GET', `/transit-routers/${transit}`)).body.data.enrollmentJwt as string,
      (await call('GET', `/cas/${ca}/jwt`)).text,
      (await controller().call('GET', `${C}/network-jwts`)).body.data[0].token as string,
    ];
    for (const jwt of jwts) {
      const { payload } = await verifyAgainstPresentedKey(jwt);
      expect(payload.iss).toMatch(/^https:\/\/(localhost|127\.0\.0\.1):\d+\/?$/);
    }
  });

  it('presents a certificate that chains to the cacerts bundle, which is line-wrapped PKCS#7 that openssl reads', async () => {
    const answer = await controller().call('GET', `${C}/.well-known/est/cacerts`);
    expect(answer.status).toBe(200);
    const lines = answer.text.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.every((line) => line.length <= 64)).toBe(true);
    expect(lines.slice(0, -1).every((line) => line.length === 64)).toBe(true);

    const printed = execFileSync('sh', ['-c', 'openssl base64 -d | openssl pkcs7 -inform DER -print_certs'], {
      input: answer.text,
    }).toString();
    expect(printed.match(/-----BEGIN CERTIFICATE-----/g)).toHaveLength(2);

    const [root, signing] = bundleOf(answer.text).map(
      (certificate) => new X509Certificate(Buffer.from(certificate.rawData)),
    );
    const presented = await presentedCertificate(controller().origin);
    expect(presented.checkIssued(signing!)).toBe(true);
    expect(presented.verify(signing!.publicKey)).toBe(true);
    expect(signing!.verify(root!.publicKey)).toBe(true);
    expect(presented.checkHost('localhost')).toBe('localhost');
    expect(presented.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(presented.keyUsage).toContain('1.3.6.1.5.5.7.3.1');
  });

  it('names its instance on every response of both APIs, errors included', async () => {
    const paths = [
      ['GET', `${C}/version`],
      ['GET', '/edge/management/v1/version'],
      ['GET', `${C}/.well-known/est/cacerts`],
      ['GET', '/edge/management/v1/identities'],
      ['GET', `${C}/current-identity`],
      ['POST', `${C}/authenticate?method=password`],
      ['GET', `${C}/no-such-path`],
      ['DELETE', `${C}/version`],
    ] as const;
    const seen = new Set<string>();
    for (const [method, path] of paths) {
      const response = await controller().call(method, path, method === 'POST' ? { body: {} } : {});
      const header = response.headers['ziti-instance-id'];
      expect(typeof header, `${method} ${path} (${response.status})`).toBe('string');
      seen.add(String(header));
    }
    expect(seen.size).toBe(1);
  });

  it('takes a device from its JWT alone to a Dial session, trusting only what the JWT and the bundle prove', async () => {
    // The admin's side: a service, a device with an ott enrollment, policies, a router.
    const service = await createdId('/services', { name: 'sdk-service', roleAttributes: ['sdk'] });
    const device = await createdId('/identities', {
      name: 'sdk-device',
      type: 'Device',
      isAdmin: false,
      roleAttributes: ['sdk'],
      enrollment: { ott: true },
    });
    await createdId('/edge-routers', { name: 'sdk-edge', roleAttributes: ['sdk'] });
    await createdId('/service-policies', {
      name: 'sdk-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#sdk'],
      serviceRoles: ['#sdk'],
    });
    await createdId('/edge-router-policies', {
      name: 'sdk-erp',
      semantic: 'AnyOf',
      identityRoles: ['#sdk'],
      edgeRouterRoles: ['#sdk'],
    });
    await createdId('/service-edge-router-policies', {
      name: 'sdk-serp',
      semantic: 'AnyOf',
      serviceRoles: ['#sdk'],
      edgeRouterRoles: ['#sdk'],
    });
    const jwt = (await call('GET', `/identities/${device}`)).body.data.enrollment.ott.jwt as string;

    // The device's side, from the JWT alone: the TLS certificate is trusted only because the JWT verifies with its key.
    const { payload } = await verifyAgainstPresentedKey(jwt);
    const origin = String(payload.iss).replace(/\/$/, '');
    const verifiedKey = (await presentedCertificate(origin)).publicKey;
    const cacerts = await new Promise<string>((resolve, reject) => {
      // Unverified TLS, but only to the server whose key the JWT was just verified with.
      const request = httpsGet(`${origin}${C}/.well-known/est/cacerts`, { rejectUnauthorized: false }, (response) => {
        const presented = (response.socket as TLSSocket).getPeerX509Certificate();
        if (!presented?.publicKey.equals(verifiedKey)) reject(new Error('another server answered'));
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve(body));
      });
      request.on('error', reject);
    });
    const bundlePem = bundleOf(cacerts)
      .map((certificate) => certificate.toString('pem'))
      .join('\n');

    // From here on the bundle is the only trust, as in the SDK: TLS is verified against it.
    const sdk = (method: string, path: string, options = {}) => httpsCall(origin, bundlePem, method, path, options);
    const { csr, key } = await csrFor('sdk-device');
    const enrolled = await sdk('POST', `${C}/enroll?method=ott&token=${payload.jti}`, {
      rawBody: csr,
      headers: { 'content-type': 'application/x-pem-file' },
    });
    expect(enrolled.status, enrolled.text).toBe(200);
    const credentials = { key, cert: leafOf(enrolled.body.data.cert) };
    const login = await sdk('POST', `${C}/authenticate?method=cert`, { body: {}, cert: credentials });
    expect(login.status, login.text).toBe(200);
    const token = login.body.data.token as string;
    const services = await sdk('GET', `${C}/services`, { token });
    expect(services.body.data.map((entry: { id: string }) => entry.id)).toEqual([service]);
    const session = await sdk('POST', `${C}/sessions`, { token, body: { serviceId: service, type: 'Dial' } });
    expect(session.status, session.text).toBe(201);
  });
});

describe('a restarted controller', () => {
  const started: TestController[] = [];
  afterAll(async () => {
    for (const running of started) await running.close();
  });

  it('keeps its instance id and its server key (JWTs issued before still verify against its certificate)', async () => {
    const overrides = {
      tableName: `test-restart-${randomUUID()}`,
      pkiKeys: { kind: 'files' as const, directory: mkdtempSync(join(tmpdir(), 'ziti-restart-keys-')) },
    };
    const first = await startTestController(overrides);
    started.push(first);
    const firstId = (await first.call('GET', `${C}/version`)).headers['ziti-instance-id'];
    const jwt = (await first.call('GET', `${C}/network-jwts`)).body.data[0].token as string;
    await first.close();
    started.pop();

    const second = await startTestController(overrides);
    started.push(second);
    const secondId = (await second.call('GET', `${C}/version`)).headers['ziti-instance-id'];
    const presented = await presentedCertificate(second.origin);

    expect(secondId).toBe(firstId);
    await expect(jwtVerify(jwt, presented.publicKey)).resolves.toBeDefined();
  });
});
