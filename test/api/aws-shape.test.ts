import { connect } from 'node:tls';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { type HttpResponse, httpsCall, type RequestOptions } from '../support/https-client.ts';
import { M } from '../support/management-fixtures.ts';
import { csrFor, issue, leafOf, makeCa } from '../support/pki-fixtures.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';

/**
 * AWS's shape, locally: API Gateway's mutual TLS is all or nothing per domain, so the controller has a plain domain
 * (no client certificate ever asked for), an mTLS domain (a certificate chaining to the truststore, or no
 * connection), and the SDKs' front door: a plain domain that one-time-token JWTs name, serving enrollment, whose
 * `GET /version` sends SDKs on to the mTLS domain. The client below behaves as the C SDK 1.18.2 does (read from its
 * source, and seen running `ziti-prox-c` against this shape): its controller client follows `ziti-ctrl-address` on
 * any answer (`ziti_ctrl.c` `ctrl_default_cb`); its login runs on a client of its own, made from the controller
 * address when the first `/version` answer arrives, before that answer's header is applied (`ziti.c`
 * `version_pre_auth_cb`, `legacy_auth.c`), which ignores the header and gives up on an "authentication failed" code;
 * a failed `/version` is asked again (five seconds later).
 */

const C = '/edge/client/v1';
const { controller, admin, call, createdId } = useAdminController({}, { shape: 'aws' });

/** Whether a TLS connection to `origin` is accepted when presenting `credentials` (or nothing). */
function handshake(origin: string, credentials?: { key: string; cert: string }): Promise<boolean> {
  const url = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect({
      host: '127.0.0.1',
      port: Number(url.port),
      servername: url.hostname,
      ca: controller().rootCertPem,
      ...(credentials ?? {}),
    });
    // TLS 1.3 reports a refused client certificate after the handshake: wait for the server's first word either way.
    socket.once('secureConnect', () => socket.write('GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    socket.once('data', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });
}

/** The C SDK's controller and login clients, as described at the top. */
function sdkClient(startUrl: string, credentials: { key: string; cert: string }) {
  let controllerUrl = startUrl;
  let loginUrl: string | undefined;
  const followed: string[] = [];
  const sdkCall = (url: string, method: string, path: string, options: RequestOptions = {}) =>
    httpsCall(url, controller().rootCertPem, method, path, { ...options, cert: credentials });
  /** A call of the controller client: it follows `ziti-ctrl-address` after the answer's callback. */
  const send = async (method: string, path: string, options: RequestOptions = {}) => {
    const response = await sdkCall(controllerUrl, method, path, options);
    const next = response.headers['ziti-ctrl-address'];
    if (typeof next === 'string' && next !== controllerUrl) {
      followed.push(next);
      controllerUrl = next;
    }
    return response;
  };
  return {
    send,
    followed,
    controllerUrl: () => controllerUrl,
    /** `/version` until it answers (the login client is made from the address it answered at), then the login. */
    async login(): Promise<HttpResponse> {
      for (let attempt = 1; !loginUrl && attempt <= 3; attempt++) {
        const asked = controllerUrl;
        if ((await send('GET', '/version')).status === 200) loginUrl = asked;
      }
      const gaveUp = ['INVALID_AUTH', 'UNAUTHORIZED', 'REQUIRES_CERT_AUTH', 'INVALID_AUTHENTICATION'];
      for (let attempt = 1; ; attempt++) {
        const response = await sdkCall(loginUrl!, 'POST', `${C}/authenticate?method=cert`, { body: {} });
        if (response.status === 200 || gaveUp.includes(response.body?.error?.code) || attempt === 3) return response;
      }
    },
  };
}

describe("AWS's three ways in, emulated by three listeners", () => {
  it('refuses TLS without a certificate of the truststore on the mTLS listener, and never asks on the plain one', async () => {
    const stranger = await issue(await makeCa('nobody we know'), 'stranger');
    const device = await createdId('/identities', {
      name: 'tls-device',
      type: 'Device',
      isAdmin: false,
      enrollment: { ott: true },
    });
    const token = (await call('GET', `/identities/${device}`)).body.data.enrollment.ott.token as string;
    const { csr, key } = await csrFor('tls-device');
    const enrolled = await controller().call('POST', `${C}/enroll/ott`, { body: { token, clientCsr: csr } });
    const credentials = { key, cert: leafOf(enrolled.body.data.cert) };

    expect(await handshake(controller().mtls!.origin)).toBe(false);
    expect(await handshake(controller().mtls!.origin, stranger)).toBe(false);
    expect(await handshake(controller().mtls!.origin, credentials)).toBe(true);
    expect(await handshake(controller().origin)).toBe(true);
    // The plain listener never sees the certificate: a cert login there is sent to the mTLS address.
    const plain = await controller().call('POST', `${C}/authenticate?method=cert`, { body: {}, cert: credentials });
    expect(plain.status).toBe(421);
    expect(plain.body.error.code).toBe('MISDIRECTED_REQUEST');
    expect(plain.headers['ziti-ctrl-address']).toBe(controller().mtls!.origin);
  });

  it('takes a device from its JWT through enrollment (front door) to a certificate login, services and a Dial session (mTLS)', async () => {
    const service = await createdId('/services', { name: 'shape-service', roleAttributes: ['shape'] });
    const device = await createdId('/identities', {
      name: 'shape-device',
      type: 'Device',
      isAdmin: false,
      roleAttributes: ['shape'],
      enrollment: { ott: true },
    });
    await createdId('/edge-routers', { name: 'shape-edge', roleAttributes: ['shape'] });
    await createdId('/service-policies', {
      name: 'shape-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#shape'],
      serviceRoles: ['#shape'],
    });
    await createdId('/edge-router-policies', {
      name: 'shape-erp',
      semantic: 'AnyOf',
      identityRoles: ['#shape'],
      edgeRouterRoles: ['#shape'],
    });
    await createdId('/service-edge-router-policies', {
      name: 'shape-serp',
      semantic: 'AnyOf',
      serviceRoles: ['#shape'],
      edgeRouterRoles: ['#shape'],
    });
    const jwt = (await call('GET', `/identities/${device}`)).body.data.enrollment.ott.jwt as string;
    const claims = decodeJwt(jwt);
    expect(String(claims.iss)).toBe(controller().sdk!.origin);

    // Enrollment at the JWT's address: the front door serves it like any plain address.
    const door = (method: string, path: string, options: RequestOptions = {}) =>
      httpsCall(String(claims.iss), controller().rootCertPem, method, path, options);
    expect((await door('GET', `${C}/.well-known/est/cacerts`)).status).toBe(200);
    const { csr, key } = await csrFor('shape-device');
    const enrolled = await door('POST', `${C}/enroll?method=ott&token=${claims.jti}`, {
      rawBody: csr,
      headers: { 'content-type': 'application/x-pem-file' },
    });
    expect(enrolled.status, enrolled.text).toBe(200);

    // The SDK loaded from the identity file it wrote (controller = the JWT's iss) finds its way to the mTLS address.
    const sdk = sdkClient(String(claims.iss), { key, cert: leafOf(enrolled.body.data.cert) });
    const login = await sdk.login();
    expect(login.status, login.text).toBe(200);
    expect(sdk.followed).toEqual([controller().mtls!.origin]);

    const token = login.body.data.token as string;
    const services = await sdk.send('GET', `${C}/services`, { token });
    expect(services.body.data.map((entry: { id: string }) => entry.id)).toEqual([service]);
    const session = await sdk.send('POST', `${C}/sessions`, { token, body: { serviceId: service, type: 'Dial' } });
    expect(session.status, session.text).toBe(201);
    expect(sdk.controllerUrl()).toBe(controller().mtls!.origin);
  });

  it('keeps password logins, admins and their /version on the plain listener: only the front door sends SDKs on', async () => {
    const login = await controller().call('POST', `${M}/authenticate?method=password`, {
      body: { username: ADMIN_USERNAME, password: ADMIN_PASSWORD },
    });
    expect(login.status).toBe(200);
    expect(login.headers['ziti-ctrl-address']).toBeUndefined();
    expect((await call('GET', '/identities')).headers['ziti-ctrl-address']).toBeUndefined();
    const plainVersion = await controller().call('GET', '/version');
    expect(plainVersion.status).toBe(200);
    expect(plainVersion.headers['ziti-ctrl-address']).toBeUndefined();
    const doorVersion = await httpsCall(controller().sdk!.origin, controller().rootCertPem, 'GET', '/version');
    expect(doorVersion.status).toBe(421);
    expect(doorVersion.headers['ziti-ctrl-address']).toBe(controller().mtls!.origin);
  });

  it('names the mTLS address in certificate enrollments and trusts a CA on the mTLS listener once it is verified', async () => {
    const ca = await makeCa('shape third party');
    const caId = await createdId('/cas', {
      name: 'shape-ca',
      certPem: ca.pem,
      isAutoCaEnrollmentEnabled: true,
      isOttCaEnrollmentEnabled: true,
      isAuthEnabled: true,
      identityRoles: [],
    });
    const device = await issue(ca, 'shape-ca-device');
    expect(await handshake(controller().mtls!.origin, device)).toBe(false);

    const verificationToken = (await call('GET', `/cas/${caId}`)).body.data.verificationToken as string;
    const verified = await controller().call('POST', `${M}/cas/${caId}/verify`, {
      token: admin(),
      rawBody: (await issue(ca, verificationToken)).cert,
      headers: { 'content-type': 'text/plain' },
    });
    expect(verified.status, verified.text).toBe(200);
    expect(await handshake(controller().mtls!.origin, device)).toBe(true);

    const caJwt = decodeJwt((await call('GET', `/cas/${caId}/jwt`)).text);
    expect(String(caJwt.iss).replace(/\/$/, '')).toBe(controller().mtls!.origin);
    const ottca = await createdId('/identities', {
      name: 'shape-ottca',
      type: 'Device',
      isAdmin: false,
      enrollment: { ottca: caId },
    });
    const ottcaJwt = decodeJwt((await call('GET', `/identities/${ottca}`)).body.data.enrollment.ottca.jwt);
    expect(ottcaJwt.iss).toBe(controller().mtls!.origin);
    const enrolled = await httpsCall(controller().mtls!.origin, controller().rootCertPem, 'POST', `${C}/enroll/ca`, {
      body: {},
      cert: device,
    });
    expect(enrolled.status, enrolled.text).toBe(200);
  });
});
