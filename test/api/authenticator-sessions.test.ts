import { describe, expect, it } from 'vitest';
import { mapBounded } from '#shared/map-bounded.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { csrFor, leafOf } from '../support/pki-fixtures.ts';
import { storeApiSessions } from '../support/stored-api-sessions.ts';

/**
 * An API session ends with the authenticator that opened it, as the reference deletes an authenticator's sessions
 * with it: however the authenticator goes, the session answers 401 at its next request, and sessions the identity's
 * other authenticator opened go on.
 */

const { controller, call, createdId } = useAdminController();
const C = '/edge/client/v1';

let sequence = 0;
const unique = (name: string) => `${name}-${++sequence}-${Date.now().toString(36)}`;

/** The status a client request with this session token is answered. */
async function statusOf(token: string): Promise<number> {
  return (await controller().call('GET', `${C}/current-api-session`, { token })).status;
}

/**
 * A device with both authenticators: a certificate (enrolled by ott) and a password an admin gave it, each with a
 * session of its own.
 */
async function deviceWithTwoSessions(name: string) {
  const id = await createdId('/identities', { name, type: 'Device', isAdmin: false, enrollment: { ott: true } });
  const token = (await call('GET', `/identities/${id}`)).body.data.enrollment.ott.token;
  const { csr, key } = await csrFor(name);
  const enrolled = await controller().call('POST', `${C}/enroll/ott`, { body: { token, clientCsr: csr } });
  expect(enrolled.status, enrolled.text).toBe(200);
  const credentials = { key, cert: leafOf(enrolled.body.data.cert) };
  const password = `${name}-Passw0rd!`;
  const updbId = await createdId('/authenticators', { identityId: id, method: 'updb', username: name, password });
  const certLogin = await controller().call('POST', `${C}/authenticate?method=cert`, { body: {}, cert: credentials });
  expect(certLogin.status, certLogin.text).toBe(200);
  const cert = {
    authenticatorId: certLogin.body.data.authenticatorId as string,
    session: certLogin.body.data.token as string,
    sessionId: certLogin.body.data.id as string,
  };
  const updb = {
    authenticatorId: updbId,
    session: await controller().login(name, password),
    password,
  };
  expect(await statusOf(cert.session)).toBe(200);
  expect(await statusOf(updb.session)).toBe(200);
  return { id, credentials, cert, updb };
}

/** The ids of the identity's sessions the admin list shows. */
async function listedSessionIds(identityId: string): Promise<string[]> {
  const filter = encodeURIComponent(`identityId = "${identityId}"`);
  const listed = await call('GET', `/api-sessions?filter=${filter}&limit=500`);
  expect(listed.status, listed.text).toBe(200);
  return listed.body.data.map((session: { id: string }) => session.id);
}

describe('deleting an authenticator', () => {
  it('ends the sessions it opened at their next request; a password change, which keeps it, does not', async () => {
    const device = await deviceWithTwoSessions(unique('deleted-updb'));
    const changed = await controller().call(
      'PATCH',
      `${C}/current-identity/authenticators/${device.updb.authenticatorId}`,
      {
        token: device.updb.session,
        body: { currentPassword: device.updb.password, password: `${device.updb.password}-new` },
      },
    );
    expect(changed.status, changed.text).toBe(200);
    expect(await statusOf(device.updb.session)).toBe(200);
    const updbSessionId = (await controller().call('GET', `${C}/current-api-session`, { token: device.updb.session }))
      .body.data.id as string;

    const deleted = await call('DELETE', `/authenticators/${device.updb.authenticatorId}`);

    expect(deleted.status, deleted.text).toBe(200);
    expect(await statusOf(device.updb.session)).toBe(401);
    expect(await statusOf(device.cert.session)).toBe(200);
    expect((await call('GET', `/api-sessions/${updbSessionId}`)).status).toBe(404);
    expect(await listedSessionIds(device.id)).toEqual([device.cert.sessionId]);
  });

  it('ends every session it opened, however many, and none the other authenticator opened', async () => {
    const device = await deviceWithTwoSessions(unique('many-sessions'));
    const { deps } = controller();
    const ofUpdb = await storeApiSessions(deps, device.id, 60, 0, device.updb.authenticatorId);
    const ofCert = await storeApiSessions(deps, device.id, 3, 0, device.cert.authenticatorId);

    const deleted = await call('DELETE', `/authenticators/${device.updb.authenticatorId}`);

    expect(deleted.status, deleted.text).toBe(200);
    const updbStatuses = await mapBounded([device.updb.session, ...ofUpdb.map((s) => s.token)], 8, statusOf);
    expect(updbStatuses).toEqual(updbStatuses.map(() => 401));
    const certStatuses = await mapBounded([device.cert.session, ...ofCert.map((s) => s.token)], 8, statusOf);
    expect(certStatuses).toEqual(certStatuses.map(() => 200));
    expect((await listedSessionIds(device.id)).sort()).toEqual(
      [device.cert.sessionId, ...ofCert.map((s) => s.id)].sort(),
    );
  }, 120_000);
});

describe('re-enrolling an authenticator', () => {
  it('ends the sessions it opened; a certificate extension, which keeps the authenticator, does not', async () => {
    const device = await deviceWithTwoSessions(unique('re-enrolled-cert'));
    const next = await csrFor('re-enrolled-next');
    const extendPath = `${C}/current-identity/authenticators/${device.cert.authenticatorId}`;
    const extended = await controller().call('POST', `${extendPath}/extend`, {
      token: device.cert.session,
      cert: device.credentials,
      body: { clientCertCsr: next.csr },
    });
    expect(extended.status, extended.text).toBe(200);
    const renewed = { key: next.key, cert: leafOf(extended.body.data.clientCert) };
    const verified = await controller().call('POST', `${extendPath}/extend-verify`, {
      token: device.cert.session,
      cert: renewed,
      body: { clientCert: renewed.cert },
    });
    expect(verified.status, verified.text).toBe(200);
    expect(await statusOf(device.cert.session)).toBe(200);

    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const reEnrolled = await call('POST', `/authenticators/${device.cert.authenticatorId}/re-enroll`, { expiresAt });

    expect(reEnrolled.status, reEnrolled.text).toBe(201);
    expect(await statusOf(device.cert.session)).toBe(401);
    expect(await statusOf(device.updb.session)).toBe(200);
    expect((await call('GET', `/api-sessions/${device.cert.sessionId}`)).status).toBe(404);
  });
});
