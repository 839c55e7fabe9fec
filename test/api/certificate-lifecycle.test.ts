import { X509Certificate } from 'node:crypto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { apiSessionCertificates } from '#shared/entities/api-session-certificate.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { countSigns } from '../support/count-signs.ts';
import { authPolicyBody } from '../support/management-fixtures.ts';
import { csrFor, issue, leafOf, makeCa } from '../support/pki-fixtures.ts';

const { controller, call, createdId } = useAdminController();
const C = '/edge/client/v1';

const fingerprintOf = (pem: string) => new X509Certificate(pem).fingerprint.replaceAll(':', '').toLowerCase();

function certLogin(credentials: { cert: string; key: string }, api = C) {
  return controller().call('POST', `${api}/authenticate?method=cert`, { body: {}, cert: credentials });
}

/** An identity enrolled by ott: its id, its key and certificate (leaf), and its cert authenticator's id. */
async function enrolledIdentity(name: string, extra: Record<string, unknown> = {}) {
  const id = await createdId('/identities', {
    name,
    type: 'Device',
    isAdmin: false,
    enrollment: { ott: true },
    ...extra,
  });
  const token = (await call('GET', `/identities/${id}`)).body.data.enrollment.ott.token;
  const { csr, key } = await csrFor(name);
  const enrolled = await controller().call('POST', `${C}/enroll/ott`, { body: { token, clientCsr: csr } });
  expect(enrolled.status, enrolled.text).toBe(200);
  const credentials = { key, cert: leafOf(enrolled.body.data.cert) };
  const authenticatorId = (await call('GET', `/identities/${id}`)).body.data.authenticators.cert.id as string;
  return { id, credentials, authenticatorId };
}

async function sessionOf(credentials: { cert: string; key: string }) {
  const login = await certLogin(credentials);
  expect(login.status, login.text).toBe(200);
  return login.body.data.token as string;
}

describe('issued certificates name whom the controller says, whatever the CSR asks', () => {
  /** The network's trust domain when none is configured: the SHA-1 of the root CA (the first of a `ca` bundle). */
  const trustDomainOf = (caBundle: string) => fingerprintOf(leafOf(caBundle));

  it('gives an identity CN = its id and its SPIFFE ID, nothing of the CSR (another id, O, emailAddress, SANs)', async () => {
    const victim = await createdId('/identities', { name: 'someone-else', type: 'User', isAdmin: false });
    const id = await createdId('/identities', {
      name: 'subject-test',
      type: 'Device',
      isAdmin: false,
      enrollment: { ott: true },
    });
    const token = (await call('GET', `/identities/${id}`)).body.data.enrollment.ott.token;
    const { csr } = await csrFor(
      'ignored',
      [
        { type: 'url', value: `spiffe://elsewhere/identity/${victim}` },
        { type: 'dns', value: 'evil.example.com' },
      ],
      `CN=${victim}, O=Evil Corp, E=evil@example.com`,
    );

    const enrolled = await controller().call('POST', `${C}/enroll/ott`, { body: { token, clientCsr: csr } });

    expect(enrolled.status, enrolled.text).toBe(200);
    const issued = new X509Certificate(leafOf(enrolled.body.data.cert));
    expect(issued.subject).toBe(`CN=${id}`);
    expect(issued.subjectAltName).toBe(`URI:spiffe://${trustDomainOf(enrolled.body.data.ca)}/identity/${id}`);
  });

  it("gives a router CN = its id and keeps only its server CSR's own host names and addresses", async () => {
    const routerId = await createdId('/edge-routers', { name: 'er-names' });
    const token = (await call('GET', `/edge-routers/${routerId}`)).body.data.enrollmentToken;
    const client = await csrFor('er-names', undefined, 'CN=admin, O=Evil Corp');
    const enroll = (serverCsr: string) =>
      controller().call('POST', `${C}/enroll/erott`, { body: { token, clientCsr: client.csr, serverCsr } });

    for (const forbidden of [
      { type: 'dns', value: '*.example.com' },
      { type: 'ip', value: '169.254.169.254' },
      { type: 'ip', value: 'fe80::1' },
      { type: 'ip', value: '0.0.0.0' },
      { type: 'email', value: 'router@example.com' },
    ] as const) {
      const refused = await enroll((await csrFor('er-names', [forbidden])).csr);
      expect(refused.status, forbidden.value).toBe(400);
      expect(refused.body.error.code).toBe('COULD_NOT_PROCESS_CSR');
    }
    const server = await csrFor('er-names', [
      { type: 'dns', value: 'router.example.test' },
      { type: 'ip', value: '10.0.0.5' },
    ]);
    const enrolled = await enroll(server.csr);

    expect(enrolled.status, enrolled.text).toBe(200);
    const clientCert = new X509Certificate(leafOf(enrolled.body.data.cert));
    const serverCert = new X509Certificate(leafOf(enrolled.body.data.serverCert));
    expect(clientCert.subject).toBe(`CN=${routerId}`);
    expect(clientCert.subjectAltName).toMatch(new RegExp(`^URI:spiffe://[a-z0-9._-]+/router/${routerId}$`));
    expect(serverCert.subject).toBe(`CN=${routerId}`);
    expect(serverCert.subjectAltName?.split(', ').sort()).toEqual([
      'DNS:router.example.test',
      'IP Address:10.0.0.5',
      `URI:spiffe://${trustDomainOf(enrolled.body.data.ca)}/router/${routerId}`,
    ]);
  });
});

describe('updb enrollment', () => {
  it("sets the enrollment's username with the password sent, once; the identity then logs in", async () => {
    const id = await createdId('/identities', {
      name: 'updb-user',
      type: 'User',
      isAdmin: false,
      enrollment: { updb: 'updb-user-login' },
    });
    const token = (await call('GET', `/identities/${id}`)).body.data.enrollment.updb.token;

    const noPassword = await controller().call('POST', `${C}/enroll/updb?token=${token}`, { body: {} });
    const enrolled = await controller().call('POST', `${C}/enroll/updb?token=${token}`, {
      body: { username: 'ignored', password: 'correct-horse' },
    });
    const replay = await controller().call('POST', `${C}/enroll?method=updb&token=${token}`, {
      body: { password: 'another-one' },
    });
    const login = await controller().call('POST', `${C}/authenticate?method=password`, {
      body: { username: 'updb-user-login', password: 'correct-horse' },
    });

    expect(noPassword.status).toBe(400);
    expect(noPassword.body.error.cause.field).toBe('password');
    expect(enrolled.status, enrolled.text).toBe(200);
    expect(enrolled.body.data).toEqual({ username: 'updb-user-login' });
    expect(replay.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
    expect(login.status, login.text).toBe(200);
    expect(login.body.data.identityId).toBe(id);
  });

  it('refuses an ott token at the updb route with INVALID_ENROLL_METHOD', async () => {
    const id = await createdId('/identities', {
      name: 'wrong-method',
      type: 'User',
      isAdmin: false,
      enrollment: { ott: true },
    });
    const token = (await call('GET', `/identities/${id}`)).body.data.enrollment.ott.token;
    const response = await controller().call('POST', `${C}/enroll/updb?token=${token}`, {
      body: { password: 'abcdef' },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('INVALID_ENROLL_METHOD');
  });
});

describe('edge router enrollment', () => {
  it('issues client and server certificates for its token once, verifies the router, and extends them', async () => {
    const routerId = await createdId('/edge-routers', { name: 'er-enroll' });
    const token = (await call('GET', `/edge-routers/${routerId}`)).body.data.enrollmentToken;
    const client = await csrFor('er-enroll');
    const server = await csrFor('er-enroll', [{ type: 'dns', value: 'router.example.test' }]);
    const signs = countSigns(controller().deps.signers.signingCa);
    const before = signs.count();

    const enrolled = await controller().call('POST', `${C}/enroll?method=erott&token=${token}`, {
      body: { certCsr: client.csr, serverCertCsr: server.csr },
    });
    const replay = await controller().call('POST', `${C}/enroll/erott`, {
      body: { token, clientCsr: client.csr, serverCsr: server.csr },
    });

    expect(enrolled.status, enrolled.text).toBe(200);
    expect(signs.count() - before).toBe(2);
    expectMatchesSpec('client', 'POST', '/enroll/erott', 200, enrolled.body);
    const serverCert = new X509Certificate(leafOf(enrolled.body.data.serverCert));
    expect(serverCert.subjectAltName).toContain('DNS:router.example.test');
    expect(replay.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
    const router = (await call('GET', `/edge-routers/${routerId}`)).body.data;
    const clientCert = leafOf(enrolled.body.data.cert);
    expect(router).toMatchObject({ isVerified: true, enrollmentToken: null, fingerprint: fingerprintOf(clientCert) });

    const extended = await controller().call('POST', `${C}/enroll/extend/router`, {
      body: { certCsr: client.csr, serverCertCsr: server.csr },
      cert: { key: client.key, cert: clientCert },
    });
    const stranger = await controller().call('POST', `${C}/enroll/extend/router`, {
      body: { certCsr: client.csr, serverCertCsr: server.csr },
    });

    expect(extended.status, extended.text).toBe(200);
    const newFingerprint = fingerprintOf(leafOf(extended.body.data.cert));
    expect((await call('GET', `/edge-routers/${routerId}`)).body.data.fingerprint).toBe(newFingerprint);
    expect(stranger.status).toBe(401);
  });

  it('answers 400 COULD_NOT_VALIDATE for missing CSRs, and re-enrollment replaces the token', async () => {
    const routerId = await createdId('/edge-routers', { name: 'er-reenroll' });
    const first = (await call('GET', `/edge-routers/${routerId}`)).body.data.enrollmentToken;

    const missing = await controller().call('POST', `${C}/enroll/erott`, { body: { token: first } });
    const reEnrolled = await call('POST', `/edge-routers/${routerId}/re-enroll`);
    const second = (await call('GET', `/edge-routers/${routerId}`)).body.data;
    const client = await csrFor('r');
    const old = await controller().call('POST', `${C}/enroll/erott`, {
      body: { token: first, clientCsr: client.csr, serverCsr: client.csr },
    });

    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('COULD_NOT_VALIDATE');
    expect(reEnrolled.status, reEnrolled.text).toBe(200);
    expect(second.enrollmentToken).not.toBe(first);
    expect(second.enrollmentJwt).toEqual(expect.any(String));
    expect(old.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
  });
});

describe('management enrollments', () => {
  it('creates one per method (409 for a second), lists, shows, refreshes and deletes them', async () => {
    const identityId = await createdId('/identities', { name: 'enrollments-admin', type: 'Device', isAdmin: false });
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const id = await createdId('/enrollments', { identityId, method: 'ott', expiresAt });
    const second = await call('POST', '/enrollments', { identityId, method: 'ott', expiresAt });
    const past = await call('POST', '/enrollments', {
      identityId,
      method: 'updb',
      username: 'x-user',
      expiresAt: '2001-01-01T00:00:00Z',
    });
    const noUser = await call('POST', '/enrollments', { identityId, method: 'updb', expiresAt });

    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('ENROLLMENT_EXISTS');
    expect(past.body.error.cause.field).toBe('expiresAt');
    expect(noUser.body.error.cause.field).toBe('username');
    const detail = await call('GET', `/enrollments/${id}`);
    expectMatchesSpec('management', 'GET', '/enrollments/{id}', 200, detail.body);
    const listed = await call('GET', `/enrollments?filter=${encodeURIComponent(`identityId = "${identityId}"`)}`);
    expect(listed.body.data.map((entry: { id: string }) => entry.id)).toEqual([id]);
    expectMatchesSpec('management', 'GET', '/enrollments', 200, listed.body);
    const oldToken = detail.body.data.token;

    const refreshed = await call('POST', `/enrollments/${id}/refresh`, {
      expiresAt: new Date(Date.now() + 7200_000).toISOString(),
    });
    const after = (await call('GET', `/enrollments/${id}`)).body.data;
    const { csr } = await csrFor();
    const withOld = await controller().call('POST', `${C}/enroll/ott`, { body: { token: oldToken, clientCsr: csr } });

    expect(refreshed.status, refreshed.text).toBe(200);
    expect(after.token).not.toBe(oldToken);
    expect(after.jwt).not.toBe(detail.body.data.jwt);
    expect(withOld.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
    expect((await call('DELETE', `/enrollments/${id}`)).status).toBe(200);
    expect((await call('GET', `/enrollments/${id}`)).status).toBe(404);
  });

  it('reverts an authenticator to an enrollment of its method, and creates cert authenticators from a certificate', async () => {
    const { id, credentials, authenticatorId } = await enrolledIdentity('reverted');
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();

    const reverted = await call('POST', `/authenticators/${authenticatorId}/re-enroll`, { expiresAt });

    expect(reverted.status, reverted.text).toBe(201);
    const enrollment = (await call('GET', `/enrollments/${reverted.body.data.id}`)).body.data;
    expect(enrollment).toMatchObject({ method: 'ott', identityId: id });
    expect((await certLogin(credentials)).status).toBe(401);

    const other = await createdId('/identities', { name: 'registered-cert', type: 'Device', isAdmin: false });
    const registered = await call('POST', '/authenticators', {
      identityId: other,
      method: 'cert',
      certPem: credentials.cert,
    });
    const foreign = await call('POST', '/authenticators', {
      identityId: other,
      method: 'cert',
      certPem: (await issue(await makeCa('stray'), 'stray')).cert,
    });
    expect(registered.status, registered.text).toBe(201);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('CERTIFICATE_FAILED_VALIDATION');
    expect((await certLogin(credentials)).body.data.identityId).toBe(other);
  });
});

describe('certificate extension', () => {
  it('issues a new certificate; the old one works until the new one is verified, then only the new one does', async () => {
    const { credentials, authenticatorId } = await enrolledIdentity('extended');
    const session = await sessionOf(credentials);
    const next = await csrFor('extended');

    const extended = await controller().call('POST', `${C}/current-identity/authenticators/${authenticatorId}/extend`, {
      token: session,
      cert: credentials,
      body: { clientCertCsr: next.csr },
    });
    expect(extended.status, extended.text).toBe(200);
    expectMatchesSpec('client', 'POST', '/current-identity/authenticators/{id}/extend', 200, extended.body);
    const newCredentials = { key: next.key, cert: leafOf(extended.body.data.clientCert) };
    expect((await certLogin(credentials)).status).toBe(200);

    const wrong = await controller().call(
      'POST',
      `${C}/current-identity/authenticators/${authenticatorId}/extend-verify`,
      {
        token: session,
        cert: credentials,
        body: { clientCert: credentials.cert },
      },
    );
    const verified = await controller().call(
      'POST',
      `${C}/current-identity/authenticators/${authenticatorId}/extend-verify`,
      { token: session, cert: newCredentials, body: { clientCert: newCredentials.cert } },
    );

    expect(wrong.status).toBe(400);
    expect(verified.status, verified.text).toBe(200);
    expect((await certLogin(credentials)).status).toBe(401);
    expect((await certLogin(newCredentials)).status).toBe(200);
  });

  it("tells the identity's cert logins that an admin asked for an extension", async () => {
    const { credentials, authenticatorId } = await enrolledIdentity('asked-to-extend');
    const asked = await call('POST', `/authenticators/${authenticatorId}/request-extend`, { rollKeys: true });
    const login = await certLogin(credentials);

    expect(asked.status, asked.text).toBe(200);
    expect(login.body.data).toMatchObject({
      isCertExtendable: true,
      isCertExtendRequested: true,
      isCertKeyRollRequested: true,
    });
    expect(login.headers['ziti-authenticator-extend-requested']).toBe('true');
  });

  it("cannot extend another identity's authenticator, and costs no signature trying", async () => {
    const mine = await enrolledIdentity('extend-mine');
    const theirs = await enrolledIdentity('extend-theirs');
    const session = await sessionOf(mine.credentials);
    const { csr } = await csrFor();
    const signs = countSigns(controller().deps.signers.signingCa);
    const before = signs.count();
    const response = await controller().call(
      'POST',
      `${C}/current-identity/authenticators/${theirs.authenticatorId}/extend`,
      { token: session, cert: mine.credentials, body: { clientCertCsr: csr } },
    );
    expect(response.status).toBe(404);
    expect(signs.count() - before).toBe(0);
  });
});

describe('certificate extension needs the device (the current certificate over mTLS)', () => {
  /** An enrolled device that also has a password, so a session can be had without its key. */
  async function deviceWithPassword(name: string) {
    const device = await enrolledIdentity(name);
    const password = `${name}-Password-1`;
    const updb = await call('POST', '/authenticators', {
      method: 'updb',
      identityId: device.id,
      username: name,
      password,
    });
    expect(updb.status, updb.text).toBe(201);
    const login = await controller().call('POST', `${C}/authenticate?method=password`, {
      body: { username: name, password },
    });
    expect(login.status, login.text).toBe(200);
    return { ...device, passwordSession: login.body.data.token as string };
  }

  /** The ways a session can ask without the device's key: no client certificate, or another certificate. */
  async function sessionsWithoutTheDevice(name: string) {
    const device = await deviceWithPassword(name);
    const certSession = await sessionOf(device.credentials);
    const stranger = await enrolledIdentity(`${name}-stranger`);
    return {
      device,
      attempts: [
        { why: 'password session', token: device.passwordSession, cert: undefined },
        {
          why: 'password session with an unrelated certificate',
          token: device.passwordSession,
          cert: stranger.credentials,
        },
        { why: 'cert session token replayed without the certificate', token: certSession, cert: undefined },
      ],
    };
  }

  it('refuses extend (401, no signature) from any session that does not present the current certificate', async () => {
    const { device, attempts } = await sessionsWithoutTheDevice('takeover-extend');
    const signs = countSigns(controller().deps.signers.signingCa);
    const before = signs.count();
    for (const attempt of attempts) {
      const attacker = await csrFor('attacker');
      const response = await controller().call(
        'POST',
        `${C}/current-identity/authenticators/${device.authenticatorId}/extend`,
        { token: attempt.token, cert: attempt.cert, body: { clientCertCsr: attacker.csr } },
      );
      expect(response.status, attempt.why).toBe(401);
      expect(response.body.error.code, attempt.why).toBe('UNAUTHORIZED');
    }
    expect(signs.count() - before).toBe(0);
    expect((await certLogin(device.credentials)).status).toBe(200);
  });

  it('refuses extend-verify from a session that presents neither the current nor the new certificate', async () => {
    const { device, attempts } = await sessionsWithoutTheDevice('takeover-verify');
    const deviceSession = await sessionOf(device.credentials);
    const next = await csrFor('takeover-verify');
    const extended = await controller().call(
      'POST',
      `${C}/current-identity/authenticators/${device.authenticatorId}/extend`,
      { token: deviceSession, cert: device.credentials, body: { clientCertCsr: next.csr } },
    );
    expect(extended.status, extended.text).toBe(200);
    const issued = leafOf(extended.body.data.clientCert);
    for (const attempt of attempts) {
      const response = await controller().call(
        'POST',
        `${C}/current-identity/authenticators/${device.authenticatorId}/extend-verify`,
        { token: attempt.token, cert: attempt.cert, body: { clientCert: issued } },
      );
      expect(response.status, attempt.why).toBe(401);
    }
    expect((await certLogin(device.credentials)).status).toBe(200);
  });

  it('lets the device extend from a password session when it presents its certificate (the key is the proof)', async () => {
    const device = await deviceWithPassword('extend-by-device');
    const next = await csrFor('extend-by-device');
    const extended = await controller().call(
      'POST',
      `${C}/current-identity/authenticators/${device.authenticatorId}/extend`,
      { token: device.passwordSession, cert: device.credentials, body: { clientCertCsr: next.csr } },
    );
    expect(extended.status, extended.text).toBe(200);
  });
});

describe('ephemeral certificates', () => {
  it('issues short-lived certificates to the API session, lists and deletes them, and ends them with it', async () => {
    const { credentials } = await enrolledIdentity('ephemeral');
    const session = await sessionOf(credentials);
    const other = await sessionOf(credentials);
    const { csr } = await csrFor('ephemeral');
    const path = `${C}/current-api-session/certificates`;

    const created = await controller().call('POST', path, { token: session, body: { csr } });
    expect(created.status, created.text).toBe(201);
    expectMatchesSpec('client', 'POST', '/current-api-session/certificates', 201, created.body);
    const id = created.body.data.id;
    const certificate = new X509Certificate(created.body.data.certificate);
    expect(Date.parse(certificate.validTo) - Date.now()).toBeLessThanOrEqual(12 * 3600_000);

    const listed = await controller().call('GET', path, { token: session });
    const fromOther = await controller().call('GET', `${path}/${id}`, { token: other });
    const detail = await controller().call('GET', `${path}/${id}`, { token: session });
    expect(listed.body.data.map((entry: { id: string }) => entry.id)).toEqual([id]);
    expectMatchesSpec('client', 'GET', '/current-api-session/certificates', 200, listed.body);
    expect(fromOther.status).toBe(404);
    expect(detail.body.data.fingerprint).toBe(fingerprintOf(created.body.data.certificate));
    expectMatchesSpec('client', 'GET', '/current-api-session/certificates/{id}', 200, detail.body);

    expect((await controller().call('DELETE', `${path}/${id}`, { token: session })).status).toBe(200);
    expect((await controller().call('GET', path, { token: session })).body.data).toEqual([]);
    const garbage = await controller().call('POST', path, { token: session, body: { csr: 'nope' } });
    expect(garbage.status).toBe(400);
    expect(garbage.body.error.code).toBe('COULD_NOT_PROCESS_CSR');

    const kept = await controller().call('POST', path, { token: session, body: { csr } });
    await controller().call('DELETE', `${C}/current-api-session`, { token: session });
    const gone = await controller().deps.store.get(apiSessionCertificates, kept.body.data.id);
    expect(gone).toBeUndefined();
  });
});

describe('ephemeral certificate cap under concurrency', () => {
  it('gives exactly 16 of 30 concurrent requests a certificate, with 16 signatures, and frees a slot on delete', async () => {
    const { credentials } = await enrolledIdentity('ephemeral-race');
    const session = await sessionOf(credentials);
    const path = `${C}/current-api-session/certificates`;
    const csrs = await Promise.all(Array.from({ length: 30 }, () => csrFor('ephemeral-race')));
    const signs = countSigns(controller().deps.signers.signingCa);
    const before = signs.count();

    const responses = await Promise.all(
      csrs.map(({ csr }) => controller().call('POST', path, { token: session, body: { csr } })),
    );

    const created = responses.filter((response) => response.status === 201);
    expect(created).toHaveLength(16);
    expect(responses.filter((response) => response.status !== 201).every((response) => response.status === 400)).toBe(
      true,
    );
    expect(signs.count() - before).toBe(16);
    const listed = await controller().call('GET', `${path}?limit=100`, { token: session });
    expect(listed.body.meta.pagination.totalCount).toBe(16);

    const removed = await controller().call('DELETE', `${path}/${created[0]!.body.data.id}`, { token: session });
    expect(removed.status).toBe(200);
    const again = await controller().call('POST', path, { token: session, body: { csr: csrs[0]!.csr } });
    expect(again.status, again.text).toBe(201);
    const full = await controller().call('POST', path, { token: session, body: { csr: csrs[1]!.csr } });
    expect(full.status).toBe(400);
  });

  it('gives the slot back when the CSR cannot be signed', async () => {
    const { credentials } = await enrolledIdentity('ephemeral-bad-csr');
    const session = await sessionOf(credentials);
    const path = `${C}/current-api-session/certificates`;
    for (let i = 0; i < 20; i++) {
      const bad = await controller().call('POST', path, { token: session, body: { csr: 'not a csr' } });
      expect(bad.body.error.code).toBe('COULD_NOT_PROCESS_CSR');
    }
    const { csr } = await csrFor('ephemeral-bad-csr');
    expect((await controller().call('POST', path, { token: session, body: { csr } })).status).toBe(201);
  });
});

describe('revocations and expiry at cert login', () => {
  it('refuses a certificate revoked by fingerprint (JTI), and those issued before an IDENTITY revocation', async () => {
    const a = await enrolledIdentity('revoked-jti');
    const b = await enrolledIdentity('revoked-identity');
    const session = await sessionOf(b.credentials);

    const jti = await call('POST', '/revocations', { id: fingerprintOf(a.credentials.cert), type: 'JTI' });
    const identity = await call('POST', '/revocations', { id: b.id, type: 'IDENTITY' });

    expect(jti.status, jti.text).toBe(201);
    expect(identity.status, identity.text).toBe(201);
    expect((await certLogin(a.credentials)).status).toBe(401);
    expect((await certLogin(b.credentials)).status).toBe(401);
    expect((await controller().call('GET', `${C}/current-api-session`, { token: session })).status).toBe(401);
    const detail = await call('GET', `/revocations/${b.id}`);
    expectMatchesSpec('management', 'GET', '/revocations/{id}', 200, detail.body);
    expect(detail.body.data.type).toBe('IDENTITY');
    const listed = await call('GET', `/revocations?filter=${encodeURIComponent('type = "JTI"')}`);
    expect(listed.body.data.map((entry: { id: string }) => entry.id)).toContain(fingerprintOf(a.credentials.cert));
  });

  it('makes an enrollment token revoked by JTI unusable', async () => {
    const id = await createdId('/identities', {
      name: 'revoked-token',
      type: 'Device',
      isAdmin: false,
      enrollment: { ott: true },
    });
    const token = (await call('GET', `/identities/${id}`)).body.data.enrollment.ott.token;
    expect((await call('POST', '/revocations', { id: token, type: 'JTI' })).status).toBe(201);
    const { csr } = await csrFor();

    const response = await controller().call('POST', `${C}/enroll/ott`, { body: { token, clientCsr: csr } });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
  });

  it("refuses expired certificates unless the identity's auth policy allows them", async () => {
    // The default policy allows expired certificates (as the reference's does); this one does not.
    const strictId = await createdId('/auth-policies', authPolicyBody('refuses-expired'));
    const strict = await enrolledIdentity('expired-strict', { authPolicyId: strictId });
    const lenientPolicy = authPolicyBody('allows-expired');
    lenientPolicy.primary.cert.allowExpiredCerts = true;
    const policyId = await createdId('/auth-policies', lenientPolicy);
    const lenient = await enrolledIdentity('expired-lenient', { authPolicyId: policyId });

    controller().advanceClock(400 * 24 * 3600_000);
    try {
      expect((await certLogin(strict.credentials)).status).toBe(401);
      expect((await certLogin(lenient.credentials)).status).toBe(200);
    } finally {
      controller().advanceClock(-400 * 24 * 3600_000);
    }
  });
});

describe('token enrollment', () => {
  it("makes an identity from an external JWT signer's token, with a certificate when a CSR is sent", async () => {
    const issuerKey = await makeCa('token issuer');
    const signerId = await createdId('/external-jwt-signers', {
      name: 'enrolling-idp',
      enabled: true,
      issuer: 'https://enroll.idp.test',
      audience: 'ziti',
      certPem: issuerKey.pem,
      kid: 'enroll-key',
      enrollToCertEnabled: true,
      enrollToTokenEnabled: false,
      enrollNameClaimsSelector: 'name',
      enrollAttributeClaimsSelector: '/ziti/roles',
    });
    const token = await new SignJWT({ sub: 'user-7', name: 'Seven', ziti: { roles: ['engineers'] } })
      .setProtectedHeader({ alg: 'ES256', kid: 'enroll-key' })
      .setIssuer('https://enroll.idp.test')
      .setAudience('ziti')
      .setExpirationTime('5m')
      .sign(issuerKey.keys.privateKey);
    const { csr, key } = await csrFor('seven');
    const bearer = { authorization: `Bearer ${token}`, 'ziti-token-issuer-id': signerId };

    const noCsr = await controller().call('POST', `${C}/enroll/token`, { headers: bearer, body: {} });
    const enrolled = await controller().call('POST', `${C}/enroll/token`, {
      headers: bearer,
      body: { clientCsr: csr },
    });
    const again = await controller().call('POST', `${C}/enroll/token`, { headers: bearer, body: { clientCsr: csr } });
    const unsigned = await controller().call('POST', `${C}/enroll/token`, { body: { clientCsr: csr } });

    expect(noCsr.body.error.code).toBe('INVALID_ENROLL_METHOD');
    expect(enrolled.status, enrolled.text).toBe(200);
    expect(again.body.error.code).toBe('ENROLLMENT_EXISTS');
    expect(unsigned.status).toBe(401);
    const login = await certLogin({ key, cert: leafOf(enrolled.body.data.cert) });
    expect(login.status, login.text).toBe(200);
    const identity = (await call('GET', `/identities/${login.body.data.identityId}`)).body.data;
    expect(identity).toMatchObject({ name: 'Seven', externalId: 'user-7', roleAttributes: ['engineers'] });
  });

  it("without a CSR, makes an identity under the signer's auth policy that logs in with its tokens", async () => {
    const issuerKey = await makeCa('token-only issuer');
    const policy = authPolicyBody('token-only');
    const signerId = await createdId('/external-jwt-signers', {
      name: 'token-only-idp',
      enabled: true,
      issuer: 'https://tokens.idp.test',
      audience: 'ziti',
      certPem: issuerKey.pem,
      kid: 'token-key',
      useExternalId: true,
      enrollToTokenEnabled: true,
    });
    policy.primary.extJwt = { allowed: true, allowedSigners: [signerId] };
    const policyId = await createdId('/auth-policies', policy);
    expect((await call('PATCH', `/external-jwt-signers/${signerId}`, { enrollAuthPolicyId: policyId })).status).toBe(
      200,
    );
    const token = await new SignJWT({ sub: 'token-user' })
      .setProtectedHeader({ alg: 'ES256', kid: 'token-key' })
      .setIssuer('https://tokens.idp.test')
      .setAudience('ziti')
      .setExpirationTime('5m')
      .sign(issuerKey.keys.privateKey);
    const bearer = { authorization: `Bearer ${token}` };

    const enrolled = await controller().call('POST', `${C}/enroll/token`, { headers: bearer, body: {} });
    const login = await controller().call('POST', `${C}/authenticate?method=ext-jwt`, { headers: bearer, body: {} });

    expect(enrolled.status, enrolled.text).toBe(200);
    expect(enrolled.body.data).toEqual({});
    expect(login.status, login.text).toBe(200);
    const identity = (await call('GET', `/identities/${login.body.data.identityId}`)).body.data;
    expect(identity).toMatchObject({ name: 'token-user', externalId: 'token-user', authPolicyId: policyId });
    expect(identity.authenticators).toEqual({});
  });
});
