import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { lastChangeAt, NEVER_CHANGED } from '../../functions/poll/service-updates.ts';
import { SHARED_MARKER_LIFETIME_MS } from '../../functions/poll/shared-markers.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { integrityRun } from '../support/integrity.ts';

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

  /**
   * The marker after `change` is later than before it (markers have millisecond resolution), once the markers the
   * caller shares with others, which a poll may take from what the instance read a moment ago, have been read again.
   */
  async function expectMovedBy(what: string, change: () => Promise<unknown>) {
    controller().advanceClock(SHARED_MARKER_LIFETIME_MS);
    const before = await lastChange();
    await sleep(5);
    await change();
    controller().advanceClock(SHARED_MARKER_LIFETIME_MS);
    const after = await lastChange();
    expect(after > before, `${what}: ${before} → ${after}`).toBe(true);
  }

  /** The marker is the same after `change` (no change the caller could see). */
  async function expectUnmovedBy(what: string, change: () => Promise<unknown>) {
    // Read once the earlier changes' shared markers are read again too, so `before` is not an instance's older copy.
    controller().advanceClock(SHARED_MARKER_LIFETIME_MS);
    const before = await lastChange();
    await sleep(5);
    await change();
    controller().advanceClock(SHARED_MARKER_LIFETIME_MS);
    expect(await lastChange(), what).toBe(before);
  }

  it('moves whenever what decides the caller services may have changed, so SDKs refresh', async () => {
    const before = await lastChange();
    expect(Number.isNaN(Date.parse(before))).toBe(false);
    // The bootstrap's writes (the built-in config types) already moved it.
    expect(before > NEVER_CHANGED).toBe(true);

    await expectMovedBy('the caller role attributes changed', () =>
      call('PATCH', `/identities/${frank.identityId}`, { roleAttributes: ['su'] }),
    );
    const check = await createdId('/posture-checks', { name: 'su-check', typeId: 'DOMAIN', domains: ['x'] });
    let policy = '';
    await expectMovedBy('a policy granting the caller created', async () => {
      policy = await createdId('/service-policies', {
        name: 'su-policy',
        type: 'Dial',
        semantic: 'AnyOf',
        identityRoles: ['#su'],
        serviceRoles: ['#su'],
        postureCheckRoles: [`@${check}`],
      });
    });
    await expectMovedBy('that policy changed', () =>
      call('PATCH', `/service-policies/${policy}`, { serviceRoles: ['#su', '#x'] }),
    );
    let service = '';
    await expectMovedBy('a service the policy grants created', async () => {
      service = await createdId('/services', { name: 'su-service', roleAttributes: ['su'] });
    });
    await expectMovedBy('that service changed', () => call('PATCH', `/services/${service}`, { name: 'su-service-2' }));
    const typeId = await createdId('/config-types', { name: 'su-type', schema: {} });
    const config = await createdId('/configs', { name: 'su-config', configTypeId: typeId, data: { a: 1 } });
    await call('PATCH', `/services/${service}`, { configs: [config] });
    await expectMovedBy('a config of that service changed', () =>
      call('PATCH', `/configs/${config}`, { data: { a: 2 } }),
    );
    await expectMovedBy('a posture check of that policy changed', async () =>
      expect((await call('PATCH', `/posture-checks/${check}`, { typeId: 'DOMAIN', domains: ['y'] })).status).toBe(200),
    );
    await expectMovedBy('a config type renamed (configs are keyed by type name)', () =>
      call('PATCH', `/config-types/${typeId}`, { name: 'su-type-2' }),
    );
    await expectMovedBy('the service taken out of the policy', () =>
      call('PATCH', `/services/${service}`, { roleAttributes: [] }),
    );
    await expectMovedBy('the policy deleted', () => call('DELETE', `/service-policies/${policy}`));
  });

  it('does not move for changes to services, policies and identities the caller cannot see', async () => {
    const bob = await userUnder('default', 'su-bob');
    await call('PATCH', `/identities/${bob.identityId}`, { roleAttributes: ['hidden'] });
    const check = await createdId('/posture-checks', { name: 'hidden-check', typeId: 'DOMAIN', domains: ['x'] });
    const typeId = await createdId('/config-types', { name: 'hidden-type', schema: {} });
    const config = await createdId('/configs', { name: 'hidden-config', configTypeId: typeId, data: { a: 1 } });
    let policy = '';
    let service = '';
    await expectUnmovedBy('a policy for others created', async () => {
      policy = await createdId('/service-policies', {
        name: 'hidden-policy',
        type: 'Dial',
        semantic: 'AnyOf',
        identityRoles: ['#hidden'],
        serviceRoles: ['#hidden'],
        postureCheckRoles: [`@${check}`],
      });
    });
    await expectUnmovedBy('a service only others see created and changed', async () => {
      service = await createdId('/services', { name: 'hidden-service', roleAttributes: ['hidden'], configs: [config] });
      await call('PATCH', `/services/${service}`, { name: 'hidden-service-2' });
    });
    await expectUnmovedBy("a config of others' service changed", () =>
      call('PATCH', `/configs/${config}`, { data: { a: 2 } }),
    );
    await expectUnmovedBy("a posture check of others' policy changed", async () =>
      expect((await call('PATCH', `/posture-checks/${check}`, { typeId: 'DOMAIN', domains: ['y'] })).status).toBe(200),
    );
    await expectUnmovedBy('another identity changed', () =>
      call('PATCH', `/identities/${bob.identityId}`, { roleAttributes: ['hidden', 'more'] }),
    );
    await expectUnmovedBy('edge routers and their policies changed', async () => {
      await createdId('/edge-routers', { name: 'hidden-router' });
      await createdId('/edge-router-policies', {
        name: 'hidden-erp',
        semantic: 'AnyOf',
        identityRoles: ['#all'],
        edgeRouterRoles: ['#all'],
      });
      await createdId('/service-edge-router-policies', {
        name: 'hidden-serp',
        semantic: 'AnyOf',
        serviceRoles: ['#all'],
        edgeRouterRoles: ['#all'],
      });
    });
    await expectUnmovedBy("others' policy and service deleted", async () => {
      await call('DELETE', `/service-policies/${policy}`);
      await call('DELETE', `/services/${service}`);
    });
  });

  it('moves for what names the caller by id: policies, its overrides, and what those policies grant', async () => {
    const byId = `@${frank.identityId}`;
    const check = await createdId('/posture-checks', { name: 'su-id-check', typeId: 'DOMAIN', domains: ['x'] });
    const typeId = await createdId('/config-types', { name: 'su-id-type', schema: {} });
    const config = await createdId('/configs', { name: 'su-id-config', configTypeId: typeId, data: { a: 1 } });
    const override = await createdId('/configs', { name: 'su-id-override', configTypeId: typeId, data: { a: 9 } });
    let policy = '';
    await expectMovedBy('a policy naming the caller by id created', async () => {
      policy = await createdId('/service-policies', {
        name: 'su-id-policy',
        type: 'Dial',
        semantic: 'AnyOf',
        identityRoles: [byId],
        serviceRoles: ['#su-id'],
        postureCheckRoles: [`@${check}`],
      });
    });
    await expectMovedBy('that policy changed', async () =>
      expect((await call('PATCH', `/service-policies/${policy}`, { name: 'su-id-policy-2' })).status).toBe(200),
    );
    let service = '';
    await expectMovedBy('a service that policy grants created', async () => {
      service = await createdId('/services', { name: 'su-id-service', roleAttributes: ['su-id'], configs: [config] });
    });
    await expectMovedBy('that service changed', async () =>
      expect((await call('PATCH', `/services/${service}`, { name: 'su-id-service-2' })).status).toBe(200),
    );
    await expectMovedBy('a config of that service changed', async () =>
      expect((await call('PATCH', `/configs/${config}`, { data: { a: 2 } })).status).toBe(200),
    );
    await expectMovedBy('a posture check of that policy changed', async () =>
      expect((await call('PATCH', `/posture-checks/${check}`, { typeId: 'DOMAIN', domains: ['y'] })).status).toBe(200),
    );
    const pair = [{ serviceId: service, configId: override }];
    await expectMovedBy('an override of the caller created', async () =>
      expect((await call('POST', `/identities/${frank.identityId}/service-configs`, pair)).status).toBe(200),
    );
    await expectMovedBy('that override deleted', async () =>
      expect((await call('DELETE', `/identities/${frank.identityId}/service-configs`, pair)).status).toBe(200),
    );
    await expectMovedBy('the policy deleted', async () =>
      expect((await call('DELETE', `/service-policies/${policy}`)).status).toBe(200),
    );
  });

  it('moves the markers of the identities a policy names that exist, and makes no identity of one that does not', async () => {
    // A policy can name only identities that exist (`@id` roles are checked), but one deleted outside the API stays
    // named: as in a table from before the check.
    const gone = await createdId('/identities', { name: 'su-gone', type: 'User', isAdmin: false });
    const body = {
      name: 'su-gone-policy',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${gone}`, `@${frank.identityId}`],
      serviceRoles: ['#su-gone'],
    };
    const policy = await createdId('/service-policies', body);
    const { deps } = controller();
    const identityItem = { TableName: deps.store.tableName, Key: { PK: `identities#${gone}`, SK: 'META' } };
    await deps.store.db.send(new DeleteCommand(identityItem));

    await expectMovedBy('that policy changed', async () => {
      const renamed = await call('PATCH', `/service-policies/${policy}`, { name: 'su-gone-policy-2' });
      expect(renamed.status, renamed.text).toBe(200);
    });
    // A service it grants moves the markers of its roles once the service's own write has committed.
    await expectMovedBy('a service it grants created', () =>
      createdId('/services', { name: 'su-gone-service', roleAttributes: ['su-gone'] }),
    );
    await expectMovedBy('that policy deleted', async () =>
      expect((await call('DELETE', `/service-policies/${policy}`)).status).toBe(200),
    );

    expect((await deps.store.db.send(new GetCommand(identityItem))).Item).toBeUndefined();
    expect((await call('GET', `/identities/${gone}`)).status).toBe(404);
    // No change marker of an identity is an item of its own, for it or anyone.
    const findings = await integrityRun(deps, 'check');
    expect(findings.filter((finding) => finding.description.includes('CHANGED#'))).toEqual([]);
  });

  it('does not move on reads', async () => {
    const before = await lastChange();
    await controller().call('GET', `${C}/services`, { token: frank.token });
    await call('GET', '/services');
    expect(await lastChange()).toBe(before);
  });

  it('answers the fixed epoch for a marker nothing ever moved, and 401 without a session', async () => {
    expect(await lastChangeAt(controller().deps, ['never-moved'])).toBe(NEVER_CHANGED);
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
