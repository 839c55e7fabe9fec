import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { lastChangeAt, NEVER_CHANGED } from '../../functions/client/service-updates.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';

const C = '/edge/client/v1';
const { controller, call, createdId, userUnder } = useAdminController();

describe('client GET /current-api-session/service-updates', () => {
  let frank: { identityId: string; token: string };

  beforeAll(async () => {
    const user = await userUnder('default', 'su-frank');
    const response = await controller().call('POST', `${C}/authenticate?method=password`, {
      body: { username: user.username, password: user.password },
    });
    frank = { identityId: user.identityId, token: response.body.data.token as string };
  });

  const lastChange = async (): Promise<string> => {
    const response = await controller().call('GET', `${C}/current-api-session/service-updates`, {
      token: frank.token,
    });
    expect(response.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/current-api-session/service-updates', 200, response.body);
    return response.body.data.lastChangeAt as string;
  };

  /** The marker after `change` is later than before it (markers have millisecond resolution). */
  async function expectMovedBy(what: string, change: () => Promise<unknown>) {
    const before = await lastChange();
    await sleep(5);
    await change();
    const after = await lastChange();
    expect(after > before, `${what}: ${before} → ${after}`).toBe(true);
  }

  it('moves whenever what decides the caller services may have changed, so SDKs refresh', async () => {
    const before = await lastChange();
    expect(Number.isNaN(Date.parse(before))).toBe(false);
    // The bootstrap's writes already moved it.
    expect(before > NEVER_CHANGED).toBe(true);

    let policy = '';
    await expectMovedBy('a policy created', async () => {
      policy = await createdId('/service-policies', {
        name: 'su-policy',
        type: 'Dial',
        semantic: 'AnyOf',
        identityRoles: ['#su'],
        serviceRoles: ['#su'],
      });
    });
    await expectMovedBy('a policy changed', () =>
      call('PATCH', `/service-policies/${policy}`, { serviceRoles: ['#x'] }),
    );
    let service = '';
    await expectMovedBy('a service created', async () => {
      service = await createdId('/services', { name: 'su-service' });
    });
    await expectMovedBy('a service changed', () => call('PATCH', `/services/${service}`, { roleAttributes: ['su'] }));
    const typeId = await createdId('/config-types', { name: 'su-type', schema: {} });
    const config = await createdId('/configs', { name: 'su-config', configTypeId: typeId, data: { a: 1 } });
    await expectMovedBy('a config changed', () => call('PATCH', `/configs/${config}`, { data: { a: 2 } }));
    await expectMovedBy('the caller role attributes changed', () =>
      call('PATCH', `/identities/${frank.identityId}`, { roleAttributes: ['su'] }),
    );
    await expectMovedBy('an edge router policy created', () =>
      createdId('/edge-router-policies', {
        name: 'su-erp',
        semantic: 'AnyOf',
        identityRoles: ['#su'],
        edgeRouterRoles: ['#all'],
      }),
    );
    await expectMovedBy('an edge router created', () => createdId('/edge-routers', { name: 'su-router' }));
    await expectMovedBy('a posture check created', () =>
      createdId('/posture-checks', { name: 'su-check', typeId: 'DOMAIN', domains: ['x'] }),
    );
    await expectMovedBy('a policy deleted', () => call('DELETE', `/service-policies/${policy}`));
  });

  it('does not move on reads', async () => {
    const before = await lastChange();
    await controller().call('GET', `${C}/services`, { token: frank.token });
    await call('GET', '/services');
    expect(await lastChange()).toBe(before);
  });

  it('answers the fixed epoch for a marker nothing ever moved, and 401 without a session', async () => {
    expect(await lastChangeAt(controller().deps, 'never-moved')).toBe(NEVER_CHANGED);
    expect(NEVER_CHANGED).toBe('1970-01-01T00:00:00.000Z');
    expect((await controller().call('GET', `${C}/current-api-session/service-updates`)).status).toBe(401);
  });
});

describe('client GET /protocols', () => {
  it('names the HTTPS address the client reached, without a session', async () => {
    const response = await controller().call('GET', `${C}/protocols`);
    expect(response.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/protocols', 200, response.body);
    const origin = new URL(controller().origin);
    expect(response.body.data).toEqual({ https: { address: `${origin.hostname}:${origin.port}` } });
  });
});
