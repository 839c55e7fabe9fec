import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { countSigns } from '../support/count-signs.ts';
import { startTestController } from '../support/test-controller.ts';

const { controller, call, createdId } = useAdminController();
let enrollmentSigns: ReturnType<typeof countSigns>;
const C = '/edge/client/v1';

beforeAll(() => {
  enrollmentSigns = countSigns(controller().deps.signers.server);
});

/** The control channel address of a controller reached at `origin`: the same host and port, under `tls:`. */
function ctrlAddressAt(origin: string): string {
  const { hostname, port } = new URL(origin);
  return `tls:${hostname}:${port}`;
}

/** Verifies a JWT against the controller's JWKS as an enrolling client would, and answers its claims. */
async function verified(jwt: string): Promise<JWTPayload> {
  const jwks = await controller().call('GET', `${C}/enroll/jwks`);
  const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks.body), { issuer: controller().origin });
  expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'ES256', typ: 'JWT', kid: jwks.body.keys[0].kid });
  return payload;
}

describe('identity enrollment JWTs', () => {
  it('shows a JWT with each outstanding enrollment, signed once when it was made, verifiable with the JWKS', async () => {
    const before = enrollmentSigns.count();
    const id = await createdId('/identities', {
      name: 'jwt-device',
      type: 'Device',
      isAdmin: false,
      enrollment: { ott: true, updb: 'jwt-device-user' },
    });
    const afterCreate = enrollmentSigns.count();

    const first = await call('GET', `/identities/${id}`);
    const second = await call('GET', `/identities/${id}`);
    const enrollments = await call('GET', `/identities/${id}/enrollments`);

    expect(afterCreate - before).toBe(2);
    expect(enrollmentSigns.count()).toBe(afterCreate);
    expectMatchesSpec('management', 'GET', '/identities/{id}', 200, first.body);
    const { ott, updb } = first.body.data.enrollment;
    expect(second.body.data.enrollment.ott.jwt).toBe(ott.jwt);
    for (const [method, enrollment] of [
      ['ott', ott],
      ['updb', updb],
    ] as const) {
      const claims = await verified(enrollment.jwt);
      expect(claims).toEqual({
        em: method,
        sub: id,
        jti: enrollment.token,
        iss: controller().origin,
        aud: [''],
        exp: Math.floor(Date.parse(enrollment.expiresAt) / 1000),
      });
    }
    expect(enrollments.body.data.map((e: { jwt: string }) => e.jwt).sort()).toEqual([ott.jwt, updb.jwt].sort());
  });

  it('shows no enrollment and signs nothing for an identity created without one', async () => {
    const before = enrollmentSigns.count();
    const id = await createdId('/identities', { name: 'jwt-none', type: 'Device', isAdmin: false });

    const response = await call('GET', `/identities/${id}`);

    expect(response.body.data.enrollment).toEqual({});
    expect(enrollmentSigns.count()).toBe(before);
  });
});

describe('router enrollment JWTs', () => {
  it('gives an edge router an erott JWT for its enrollment token, signed once', async () => {
    const before = enrollmentSigns.count();
    const id = await createdId('/edge-routers', { name: 'jwt-edge-router' });

    const response = await call('GET', `/edge-routers/${id}`);

    expect(enrollmentSigns.count() - before).toBe(1);
    const router = response.body.data;
    expect(await verified(router.enrollmentJwt)).toEqual({
      em: 'erott',
      sub: id,
      jti: router.enrollmentToken,
      iss: controller().origin,
      aud: [''],
      exp: Math.floor(Date.parse(router.enrollmentExpiresAt) / 1000),
      // Where the router dials the control channel once enrolled: nothing else tells it.
      ctrls: [ctrlAddressAt(controller().origin)],
    });
  });

  it('gives a transit router a trott JWT, shown under both of its paths', async () => {
    const id = await createdId('/transit-routers', { name: 'jwt-transit-router' });

    const transit = await call('GET', `/transit-routers/${id}`);
    const router = await call('GET', `/routers/${id}`);

    expect(router.body.data.enrollmentJwt).toBe(transit.body.data.enrollmentJwt);
    expect(await verified(transit.body.data.enrollmentJwt)).toMatchObject({
      em: 'trott',
      sub: id,
      jti: transit.body.data.enrollmentToken,
      ctrls: [ctrlAddressAt(controller().origin)],
    });
  });

  it('names the control channel again in a re-enrolled edge router’s JWT', async () => {
    const id = await createdId('/edge-routers', { name: 'jwt-re-enrolled-router' });

    expect((await call('POST', `/edge-routers/${id}/re-enroll`)).status).toBe(200);

    const router = (await call('GET', `/edge-routers/${id}`)).body.data;
    expect(await verified(router.enrollmentJwt)).toMatchObject({
      em: 'erott',
      jti: router.enrollmentToken,
      ctrls: [ctrlAddressAt(controller().origin)],
    });
  });

  it('names the configured control channel address (CTRL_ADDRESS), the one GET /controllers shows', async () => {
    const ctrlAddress = 'tls:ctrl.example.test:6262';
    const configured = await startTestController({ ctrlAddress });
    try {
      const token = await configured.login();
      const created = await configured.call('POST', '/edge/management/v1/edge-routers', {
        token,
        body: { name: 'jwt-configured-ctrl' },
      });
      const router = await configured.call('GET', `/edge/management/v1/edge-routers/${created.body.data.id}`, {
        token,
      });
      const controllers = await configured.call('GET', '/edge/management/v1/controllers', { token });

      expect(decodeJwt(router.body.data.enrollmentJwt).ctrls).toEqual([ctrlAddress]);
      expect(controllers.body.data[0].ctrlAddress).toBe(ctrlAddress);
    } finally {
      await configured.close();
    }
  });
});
