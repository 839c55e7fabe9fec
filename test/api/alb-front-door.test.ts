import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { enrolledDevice, urlEncodedPem } from '../support/enrolled-device.ts';

const C = '/edge/client/v1';
const { controller, call, createdId, userUnder, login } = useAdminController({ frontDoor: 'alb' });

const device = (name: string, roleAttributes?: string[]) => enrolledDevice(controller, call, name, roleAttributes);

/**
 * The local server in the load balancer's shape (`FRONT_DOOR=alb`): one listener, the client certificate optional on
 * the handshake, forwarded to the handlers in the load balancer's certificate header inside its target events.
 */
describe('behind the load balancer front door', () => {
  it('an SDK enrolls by its one-time token, logs in with its certificate, lists its services and dials one', async () => {
    const linesBefore = controller().logLines.length;
    const web = await createdId('/services', { name: 'alb-web', roleAttributes: ['alb-web'] });
    await createdId('/edge-routers', { name: 'alb-edge', roleAttributes: ['alb-public'] });
    await createdId('/service-policies', {
      name: 'alb-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#alb-devices'],
      serviceRoles: ['#alb-web'],
    });
    await createdId('/edge-router-policies', {
      name: 'alb-routers',
      semantic: 'AnyOf',
      identityRoles: ['#alb-devices'],
      edgeRouterRoles: ['#alb-public'],
    });
    await createdId('/service-edge-router-policies', {
      name: 'alb-serp',
      semantic: 'AnyOf',
      serviceRoles: ['#alb-web'],
      edgeRouterRoles: ['#alb-public'],
    });
    const sdk = await device('alb-device', ['alb-devices']);

    const loggedIn = await controller().call('POST', `${C}/authenticate?method=cert`, {
      body: {},
      cert: sdk.credentials,
    });
    expect(loggedIn.status, loggedIn.text).toBe(200);
    expect(loggedIn.body.data.identity.id).toBe(sdk.id);
    const token = loggedIn.body.data.token as string;
    const services = await controller().call('GET', `${C}/services?filter=${encodeURIComponent('name = "alb-web"')}`, {
      token,
      cert: sdk.credentials,
    });
    expect(services.status, services.text).toBe(200);
    expect(services.body.data.map((service: { id: string }) => service.id)).toEqual([web]);
    const session = await controller().call('POST', `${C}/sessions`, {
      token,
      cert: sdk.credentials,
      body: { serviceId: web, type: 'Dial' },
    });
    expect(session.status, session.text).toBe(201);
    const detail = await controller().call('GET', `${C}/sessions/${session.body.data.id}`, { token });
    expect(detail.body.data.edgeRouters.map((router: { name: string }) => router.name)).toEqual(['alb-edge']);
    // Every request reached its handler as the load balancer's target event.
    const requests = controller()
      .logLines.slice(linesBefore)
      .map((line) => JSON.parse(line))
      .filter((line) => line.message === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(10);
    expect(new Set(requests.map((line) => line.via))).toEqual(new Set(['alb']));
  });

  it('refuses a certificate a client sends in the header itself, without the handshake', async () => {
    const spoofer = await device('alb-spoofed');

    const spoofed = await controller().call('POST', `${C}/authenticate?method=cert`, {
      body: {},
      headers: { 'X-Amzn-Mtls-Clientcert': urlEncodedPem(spoofer.credentials.cert) },
    });

    expect(spoofed.status, spoofed.text).toBe(401);
    expect(spoofed.body.error.code).toBe('INVALID_AUTH');
    // No 421 to another address: behind the load balancer there is none.
    expect(spoofed.headers['ziti-ctrl-address']).toBeUndefined();
  });

  it("takes the client's address from the load balancer's entry of X-Forwarded-For, not the client's own", async () => {
    const user = await userUnder('default', 'alb-forwarded');

    const loggedIn = await controller().call('POST', '/edge/management/v1/authenticate?method=password', {
      body: { username: user.username, password: user.password },
      headers: { 'X-Forwarded-For': '203.0.113.66' },
    });

    expect(loggedIn.status, loggedIn.text).toBe(200);
    expect(loggedIn.body.data.ipAddress).toBe('127.0.0.1');
    expect((await login(user.username, user.password)).body.data.ipAddress).toBe('127.0.0.1');
  });
});
