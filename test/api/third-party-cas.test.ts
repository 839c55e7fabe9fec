import { X509Certificate } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { authenticators } from '#shared/entities/authenticator.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { csrFor, issue, makeCa, type TestCa } from '../support/pki-fixtures.ts';

const { controller, admin, call, createdId } = useAdminController();
const C = '/edge/client/v1';
/** An external id claim: what follows the host in the certificate's spiffe SAN URI (`spiffe://example.org/<id>`, split on `/`). */
const SPIFFE_PATH_CLAIM = {
  location: 'SAN_URI',
  matcher: 'SCHEME',
  matcherCriteria: 'spiffe',
  parser: 'SPLIT',
  parserCriteria: '/',
  index: 3,
};

function caBody(name: string, ca: TestCa, extra: Record<string, unknown> = {}) {
  return {
    name,
    certPem: ca.pem,
    isAutoCaEnrollmentEnabled: true,
    isOttCaEnrollmentEnabled: true,
    isAuthEnabled: true,
    identityRoles: ['from-ca'],
    ...extra,
  };
}

/** A CA registered and verified the way an admin does it: a certificate it signed with CN = the verification token. */
async function verifiedCa(name: string, extra: Record<string, unknown> = {}) {
  const ca = await makeCa(`${name} root`);
  const id = await createdId('/cas', caBody(name, ca, extra));
  const detail = await call('GET', `/cas/${id}`);
  const proof = await issue(ca, detail.body.data.verificationToken);
  const verified = await verifyWith(id, proof.cert);
  expect(verified.status, verified.text).toBe(200);
  return { ca, id };
}

function verifyWith(id: string, body: string) {
  return controller().call('POST', `/edge/management/v1/cas/${id}/verify`, {
    token: admin(),
    rawBody: body,
    headers: { 'content-type': 'text/plain' },
  });
}

async function identityWithOttCa(name: string, caId: string) {
  const id = await createdId('/identities', { name, type: 'Device', isAdmin: false, enrollment: { ottca: caId } });
  const detail = await call('GET', `/identities/${id}`);
  return { id, token: detail.body.data.enrollment.ottca.token as string };
}

function certLogin(credentials: { cert: string; key: string }) {
  return controller().call('POST', `${C}/authenticate?method=cert`, { body: {}, cert: credentials });
}

describe('third-party CAs', () => {
  it('creates a CA unverified with a verification token, verifies it, and refuses a second verification', async () => {
    const ca = await makeCa('lifecycle root');
    const id = await createdId('/cas', caBody('lifecycle', ca));

    const before = await call('GET', `/cas/${id}`);
    expect(before.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/cas/{id}', 200, before.body);
    expect(before.body.data).toMatchObject({ isVerified: false, identityRoles: ['from-ca'] });
    expect(before.body.data.identityNameFormat).toBe('[caName]-[commonName]');
    expect(before.body.data.verificationToken).toMatch(/^[0-9a-f-]{36}$/);
    expect(before.body.data._links.verify.href).toBe(`./cas/${id}/verify`);
    expect(before.body.data.fingerprint).toBe(
      new X509Certificate(ca.pem).fingerprint.replaceAll(':', '').toLowerCase(),
    );

    const proof = await issue(ca, before.body.data.verificationToken);
    const verified = await verifyWith(id, proof.cert);
    const again = await verifyWith(id, proof.cert);

    expect(verified.status, verified.text).toBe(200);
    expect((await call('GET', `/cas/${id}`)).body.data.isVerified).toBe(true);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CA_ALREADY_VERIFIED');
  });

  it('answers each bad verification with its code and stays unverified', async () => {
    const ca = await makeCa('refusals root');
    const other = await makeCa('someone else');
    const id = await createdId('/cas', caBody('refusals', ca));
    const token = (await call('GET', `/cas/${id}`)).body.data.verificationToken;
    const { key } = await csrFor();
    const cases: [string, string, number, string][] = [
      ['not PEM', 'hello', 400, 'COULD_NOT_PARSE_BODY'],
      ['a key, not a certificate', key, 400, 'EXPECTED_PEM_CERTIFICATE'],
      ['the wrong common name', (await issue(ca, 'not-the-token')).cert, 400, 'INVALID_COMMON_NAME'],
      ['signed by another CA', (await issue(other, token)).cert, 400, 'CERTIFICATE_FAILED_VALIDATION'],
    ];
    for (const [name, body, status, code] of cases) {
      const response = await verifyWith(id, body);
      expect(response.status, name).toBe(status);
      expect(response.body.error.code, name).toBe(code);
    }
    expect((await call('GET', `/cas/${id}`)).body.data.isVerified).toBe(false);
  });

  it('refuses a certPem that is no CA certificate, and a second registration of the same CA', async () => {
    const ca = await makeCa('unique root');
    const leaf = await issue(ca, 'leaf');
    const notPem = await call('POST', '/cas', caBody('bad-pem', ca, { certPem: 'nope' }));
    const notCa = await call('POST', '/cas', caBody('not-a-ca', ca, { certPem: leaf.cert }));
    await createdId('/cas', caBody('unique-1', ca));
    const twice = await call('POST', '/cas', caBody('unique-2', ca));

    for (const response of [notPem, notCa]) {
      expect(response.status).toBe(400);
      expect(response.body.error.cause.field).toBe('certPem');
    }
    expect(twice.status).toBe(400);
    expect(twice.body.error.cause.field).toBe('fingerprint');
  });

  it('updates and patches settings but never the certificate, and lists with filters', async () => {
    const ca = await makeCa('settings root');
    const id = await createdId('/cas', caBody('settings', ca));
    const put = await call('PUT', `/cas/${id}`, {
      name: 'settings-renamed',
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: true,
      isAuthEnabled: false,
      identityRoles: ['a'],
      identityNameFormat: '[caName]-[requestedName]',
    });
    const patch = await call('PATCH', `/cas/${id}`, { identityRoles: ['b', 'c'] });
    const detail = await call('GET', `/cas/${id}`);
    const listed = await call('GET', `/cas?filter=${encodeURIComponent('name = "settings-renamed"')}`);

    expect(put.status, put.text).toBe(200);
    expect(patch.status, patch.text).toBe(200);
    expect(detail.body.data).toMatchObject({
      name: 'settings-renamed',
      isAutoCaEnrollmentEnabled: false,
      isAuthEnabled: false,
      identityRoles: ['b', 'c'],
      identityNameFormat: '[caName]-[requestedName]',
      certPem: ca.pem.trim(),
    });
    expect(listed.body.data.map((entry: { id: string }) => entry.id)).toEqual([id]);
    expectMatchesSpec('management', 'GET', '/cas', 200, listed.body);
  });

  it('publishes the mTLS truststore (network CA and verified CAs) when a CA is verified or deleted', async () => {
    const published: string[] = [];
    // The local server runs on this deps object: a recording truststore stands in for the S3 one.
    Object.assign(controller().deps, {
      truststore: { publish: async (bundle: string) => void published.push(bundle) },
    });
    const { ca, id } = await verifiedCa('published');
    const afterVerify = published.at(-1) ?? '';
    await call('DELETE', `/cas/${id}`);
    const afterDelete = published.at(-1) ?? '';

    expect(published).toHaveLength(2);
    const pems = (bundle: string) =>
      bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
    expect(pems(afterVerify)).toContain(ca.pem.trim());
    expect(pems(afterDelete)).not.toContain(ca.pem.trim());
    // The network's root and signing CA are always there.
    expect(pems(afterDelete).length).toBeGreaterThanOrEqual(2);
  });

  it('serves a CA enrollment JWT as application/jwt, verifiable with the enrollment JWKS', async () => {
    const ca = await makeCa('jwt root');
    const id = await createdId('/cas', caBody('jwt', ca));

    const response = await controller().call('GET', `/edge/management/v1/cas/${id}/jwt`, { token: admin() });
    const jwks = await controller().call('GET', `${C}/enroll/jwks`);
    const { payload } = await jwtVerify(response.text, createLocalJWKSet(jwks.body));

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('application/jwt');
    expect(payload).toMatchObject({ em: 'ca', sub: id, jti: id, aud: ['openziti-enroller'] });
    expect(payload.iss).toBe(`${controller().origin}/`);
    expect(payload.exp).toBeUndefined();
  });
});

describe('ottca enrollment', () => {
  it("enrolls with a certificate of the identity's CA, which then logs in; the token works once", async () => {
    const { ca, id: caId } = await verifiedCa('ottca');
    const { id, token } = await identityWithOttCa('ottca-device', caId);
    const pending = (await call('GET', `/identities/${id}`)).body.data.enrollment.ottca;
    const listed = (await call('GET', `/identities/${id}/enrollments`)).body.data;
    expect(pending.ca).toMatchObject({ id: caId, name: 'ottca' });
    expect(listed[0].ca).toMatchObject({ id: caId, name: 'ottca' });
    const device = await issue(ca, 'ottca-device');

    const enrolled = await controller().call('POST', `${C}/enroll/ottca`, { body: { token }, cert: device });
    const replay = await controller().call('POST', `${C}/enroll/ottca`, { body: { token }, cert: device });
    const login = await certLogin(device);

    expect(enrolled.status, enrolled.text).toBe(200);
    expect(enrolled.body.data).toEqual({});
    expect(replay.body.error.code).toBe('INVALID_ENROLLMENT_TOKEN');
    expect(login.status, login.text).toBe(200);
    expect(login.body.data.identityId).toBe(id);
    const identity = await call('GET', `/identities/${id}`);
    expect(identity.body.data.authenticators.cert.fingerprint).toEqual(expect.any(String));
  });

  it('refuses an unverified CA, a foreign certificate, no certificate, and a certificate already in use', async () => {
    const unverifiedCa = await makeCa('unverified root');
    const unverifiedId = await createdId('/cas', caBody('unverified', unverifiedCa));
    const { ca, id: caId } = await verifiedCa('ottca-refusals');
    const foreign = await issue(await makeCa('foreign'), 'device');
    const used = await issue(ca, 'used');
    const first = await identityWithOttCa('ottca-first', caId);
    expect(
      (await controller().call('POST', `${C}/enroll/ottca`, { body: { token: first.token }, cert: used })).status,
    ).toBe(200);

    const onUnverified = await identityWithOttCa('ottca-unverified', unverifiedId);
    const second = await identityWithOttCa('ottca-second', caId);
    const cases: [string, Record<string, unknown>, number, string][] = [
      [
        'unverified CA',
        { body: { token: onUnverified.token }, cert: await issue(unverifiedCa, 'x') },
        400,
        'ENROLLMENT_CA_NOT_VALID',
      ],
      ['foreign certificate', { body: { token: second.token }, cert: foreign }, 400, 'CERTIFICATE_FAILED_VALIDATION'],
      ['no certificate', { body: { token: second.token } }, 400, 'CERTIFICATE_FAILED_VALIDATION'],
      ['certificate in use', { body: { token: second.token }, cert: used }, 409, 'CERT_IN_USE'],
    ];
    for (const [name, options, status, code] of cases) {
      const response = await controller().call('POST', `${C}/enroll/ottca`, options);
      expect(response.status, `${name}: ${response.text}`).toBe(status);
      expect(response.body.error.code, name).toBe(code);
    }
    const identity = await call('GET', `/identities/${second.id}`);
    expect(identity.body.data.authenticators).toEqual({});
    expect(identity.body.data.enrollment.ottca.token).toBe(second.token);
  });

  it('deleting the CA deletes its enrollments and the authenticators it issued, so its certificates stop logging in', async () => {
    const { ca, id: caId } = await verifiedCa('deleted');
    const enrolled = await identityWithOttCa('deleted-enrolled', caId);
    const pending = await identityWithOttCa('deleted-pending', caId);
    const device = await issue(ca, 'deleted-device');
    await controller().call('POST', `${C}/enroll/ottca`, { body: { token: enrolled.token }, cert: device });
    const login = await certLogin(device);
    expect(login.status).toBe(200);
    const session = login.body.data.token as string;

    const deleted = await call('DELETE', `/cas/${caId}`);

    expect(deleted.status, deleted.text).toBe(200);
    expect((await certLogin(device)).status).toBe(401);
    // The session the certificate opened ends with its authenticator, at its next request.
    expect((await controller().call('GET', `${C}/current-api-session`, { token: session })).status).toBe(401);
    expect((await call('GET', `/identities/${enrolled.id}`)).body.data.authenticators).toEqual({});
    expect((await call('GET', `/identities/${pending.id}`)).body.data.enrollment).toEqual({});
  });
});

describe('deleting a CA with many identities', () => {
  it('removes every authenticator it issued, more than one transaction holds', async () => {
    const { ca, id: caId } = await verifiedCa('fleet', { identityNameFormat: '[caName]-[commonName]' });
    const devices = [];
    for (let n = 0; n < 30; n++) {
      const device = await issue(ca, `device-${n}`);
      const enrolled = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: device });
      expect(enrolled.status, enrolled.text).toBe(200);
      devices.push(device);
    }
    const deleted = await call('DELETE', `/cas/${caId}`);

    expect(deleted.status, deleted.text).toBe(200);
    expect((await call('GET', `/cas/${caId}`)).status).toBe(404);
    for (const device of [devices[0]!, devices[29]!]) expect((await certLogin(device)).status).toBe(401);
    const left = await controller().deps.store.findIdByUnique(
      authenticators,
      'fingerprint',
      new X509Certificate(devices[15]!.cert).fingerprint.replaceAll(':', '').toLowerCase(),
    );
    expect(left).toBeUndefined();
  });
});

describe('CA auto-enrollment', () => {
  it("creates an identity from the CA's roles and name format, which logs in with its certificate", async () => {
    const { ca } = await verifiedCa('auto', { identityNameFormat: '[caName]-[commonName]-[requestedName]' });
    const device = await issue(ca, 'sensor');

    const enrolled = await controller().call('POST', `${C}/enroll?method=ca`, {
      body: { name: 'north' },
      cert: device,
    });
    const again = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: device });
    const login = await certLogin(device);

    expect(enrolled.status, enrolled.text).toBe(200);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CERT_IN_USE');
    expect(login.status, login.text).toBe(200);
    const identity = await call('GET', `/identities/${login.body.data.identityId}`);
    expect(identity.body.data).toMatchObject({ name: 'auto-sensor-north', roleAttributes: ['from-ca'] });
  });

  it('appends a counter when the formatted name is taken', async () => {
    const { ca } = await verifiedCa('counted', { identityNameFormat: '[caName]-[commonName]' });
    const logins = [];
    for (const n of [1, 2]) {
      const device = await issue(ca, 'same');
      const enrolled = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: device });
      expect(enrolled.status, `${n} ${enrolled.text}`).toBe(200);
      logins.push(await certLogin(device));
    }
    const names = await Promise.all(
      logins.map(async (login) => (await call('GET', `/identities/${login.body.data.identityId}`)).body.data.name),
    );
    expect(names).toEqual(['counted-same', 'counted-same000001']);
  });

  it("with an external id claim, names the identity's externalId and logs it in by the claim", async () => {
    const { ca } = await verifiedCa('claims', { externalIdClaim: SPIFFE_PATH_CLAIM });
    const device = await issue(ca, 'claimed', { names: [{ type: 'url', value: 'spiffe://example.org/device-42' }] });
    const unclaimed = await issue(ca, 'unclaimed');

    const enrolled = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: device });
    const missing = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: unclaimed });
    const login = await certLogin(device);

    expect(enrolled.status, enrolled.text).toBe(200);
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('MISSING_CERT_CLAIM');
    expect(login.status, login.text).toBe(200);
    const identity = await call('GET', `/identities/${login.body.data.identityId}`);
    expect(identity.body.data.externalId).toBe('device-42');
    expect(identity.body.data.authenticators).toEqual({});
  });

  it('names identities within the name rule, expanding tokens only in the format, never in the certificate', async () => {
    const { ca } = await verifiedCa('n'.repeat(200), { identityNameFormat: '[caName]-[commonName]' });
    const long = await issue(ca, 'c'.repeat(300));
    const tokens = await issue(ca, '[caId][identityId]');

    expect((await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: long })).status).toBe(200);
    expect((await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: tokens })).status).toBe(200);
    const longLogin = await certLogin(long);
    const tokensLogin = await certLogin(tokens);
    const longIdentity = (await call('GET', `/identities/${longLogin.body.data.identityId}`)).body.data;
    const tokensIdentity = (await call('GET', `/identities/${tokensLogin.body.data.identityId}`)).body.data;

    expect(longIdentity.name).toHaveLength(255);
    expect(longIdentity.name.startsWith(`${'n'.repeat(200)}-ccc`)).toBe(true);
    expect(tokensIdentity.name).toBe(`${'n'.repeat(200)}-[caId][identityId]`);
    const putBack = await call('PUT', `/identities/${longIdentity.id}`, {
      name: longIdentity.name,
      type: longIdentity.typeId,
      isAdmin: false,
    });
    expect(putBack.status, putBack.text).toBe(200);
    const second = await issue(ca, 'c'.repeat(300));
    expect((await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: second })).status).toBe(200);
    const secondName = (await call('GET', `/identities/${(await certLogin(second)).body.data.identityId}`)).body.data
      .name;
    expect(secondName).toHaveLength(255);
    expect(secondName.endsWith('000001')).toBe(true);
  });

  it('refuses an external id claim too long to be a key with 400, not a 5xx', async () => {
    const { ca } = await verifiedCa('long-claims', { externalIdClaim: SPIFFE_PATH_CLAIM });
    const device = await issue(ca, 'long-claim', {
      names: [{ type: 'url', value: `spiffe://example.org/${'x'.repeat(1500)}` }],
    });
    const enrolled = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: device });
    expect(enrolled.status).toBe(400);
    expect(enrolled.body.error.cause.field).toBe('externalId');
    expect((await certLogin(device)).status).toBe(401);
  });

  it('refuses certificates no enrolling CA issued', async () => {
    const foreign = await issue(await makeCa('nobody'), 'stray');
    const response = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: foreign });
    expect(response.status).toBe(400);
    expect(['CERT_FAILED_VALIDATION', 'ENROLLMENT_NO_VALID_CAS']).toContain(response.body.error.code);
  });
});

describe('a CA is one certificate: the rest of its PEM vouches for nothing', () => {
  it('refuses a bundle whose later certificates are not the chain of the first (someone else’s CA riding along)', async () => {
    const theirs = await makeCa('third party root');
    const mine = await makeCa('my root');
    const riding = await call('POST', '/cas', { ...caBody('riding', theirs), certPem: `${theirs.pem}\n${mine.pem}` });
    const leafFirst = await call('POST', '/cas', {
      ...caBody('leaf-first', mine),
      certPem: `${(await issue(mine, 'a device')).cert}\n${mine.pem}`,
    });

    expect(riding.status).toBe(400);
    expect(riding.body.error.cause.field).toBe('certPem');
    expect(leafFirst.status).toBe(400);
  });

  it('verifies only with a certificate signed by the first certificate, and trusts only what it signs', async () => {
    const root = await makeCa('chain root');
    const intermediate = await makeCa('chain intermediate', root);
    const id = await createdId('/cas', {
      ...caBody('chained', intermediate),
      certPem: `${intermediate.pem}\n${root.pem}`,
    });
    const token = (await call('GET', `/cas/${id}`)).body.data.verificationToken;

    const byRoot = await verifyWith(id, (await issue(root, token)).cert);
    expect(byRoot.status).toBe(400);
    expect(byRoot.body.error.code).toBe('CERTIFICATE_FAILED_VALIDATION');
    const byCa = await verifyWith(id, (await issue(intermediate, token)).cert);
    expect(byCa.status, byCa.text).toBe(200);

    const rootLeaf = await issue(root, 'sibling-of-the-ca');
    const refusedEnroll = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: rootLeaf });
    expect(refusedEnroll.status).toBe(400);
    expect(refusedEnroll.body.error.code).toBe('CERT_FAILED_VALIDATION');
    expect((await certLogin(rootLeaf)).status).toBe(401);

    const caLeaf = await issue(intermediate, 'child-of-the-ca');
    const enrolled = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: caLeaf });
    expect(enrolled.status, enrolled.text).toBe(200);
    expect((await certLogin(caLeaf)).status).toBe(200);
  });

  it('does not take a CA certificate the CA issued for a device (auto-enrollment, login, admin authenticators)', async () => {
    const { ca, id: caId } = await verifiedCa('issues-sub-cas');
    const subCa = await issue(ca, 'a sub-ca', { asCa: true });
    const device = await createdId('/identities', { name: 'would-be-sub-ca', type: 'Device', isAdmin: false });

    const enroll = await controller().call('POST', `${C}/enroll/ca`, { body: {}, cert: subCa });
    const admin = await call('POST', '/authenticators', { method: 'cert', identityId: device, certPem: subCa.cert });

    expect(enroll.status).toBe(400);
    expect(enroll.body.error.code).toBe('CERT_FAILED_VALIDATION');
    expect(admin.status).toBe(400);
    expect(admin.body.error.cause.field).toBe('certPem');
    expect((await certLogin(subCa)).status).toBe(401);
    expect(caId).toBeTruthy();
  });

  it('lets an admin give an identity a cert authenticator issued by a verified, auth-enabled CA, which logs in', async () => {
    const { ca, id: caId } = await verifiedCa('admin-registered-ca');
    const device = await createdId('/identities', { name: 'admin-registered-device', type: 'Device', isAdmin: false });
    const credentials = await issue(ca, 'admin-registered-device');

    const created = await call('POST', '/authenticators', {
      method: 'cert',
      identityId: device,
      certPem: credentials.cert,
    });
    expect(created.status, created.text).toBe(201);
    const authenticator = await call('GET', `/authenticators/${created.body.data.id}`);
    expect(authenticator.body.data.caId ?? caId).toBe(caId);
    const login = await certLogin(credentials);
    expect(login.status, login.text).toBe(200);
    expect(login.body.data.identityId).toBe(device);
  });
});
