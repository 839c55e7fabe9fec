import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createApiSessionOps } from '#shared/auth/api-session-store.ts';
import { apiSessionCertificates } from '#shared/entities/api-session-certificate.ts';
import { sessions } from '#shared/entities/session.ts';
import type { IntegrityFinding, IntegrityMode } from '#shared/integrity/integrity-types.ts';
import { storedAttributes } from '#shared/store/keys.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { integrityRun, integrityRunInOrder } from '../support/integrity.ts';
import { authPolicyBody, M } from '../support/management-fixtures.ts';

const { controller, call, createdId } = useAdminController();

/** A whole check or fix over `segments` parallel segments, as the state machine runs it. */
const run = (mode: IntegrityMode, segments = 4) => integrityRun(controller().deps, mode, segments);

/** A whole run with the segments one after another in `order` (see `integrityRunInOrder`). */
const runInOrder = (mode: IntegrityMode, order: readonly number[]) =>
  integrityRunInOrder(controller().deps, mode, order);

/** A fix that repaired everything it found: each finding written, none left "not fixed". */
function expectAllFixed(findings: readonly IntegrityFinding[]): void {
  expect(findings.filter((finding) => !finding.fixed)).toEqual([]);
}

/** Damage, then: the check finds it, the fix fixes all it finds, and a second check is clean. */
async function findAndFix(damage: () => Promise<unknown>, expected: RegExp, segments = 4): Promise<void> {
  expect(await run('check', segments)).toEqual([]);
  await damage();
  const found = await run('check', segments);
  expect(found.map((finding) => finding.description)).toEqual(
    expect.arrayContaining([expect.stringMatching(expected)]),
  );
  expect(found.every((finding) => !finding.fixed)).toBe(true);
  const fixed = await run('fix', segments);
  expect(fixed.some((finding) => expected.test(finding.description) && finding.fixed)).toBe(true);
  expectAllFixed(fixed);
  expect(await run('check', segments)).toEqual([]);
}

const db = () => controller().deps.store.db;
const TableName = () => controller().deps.config.tableName;
const del = (PK: string, SK: string) => db().send(new DeleteCommand({ TableName: TableName(), Key: { PK, SK } }));
const putItem = (Item: Record<string, unknown>) => db().send(new PutCommand({ TableName: TableName(), Item }));

let n = 0;
const unique = (name: string) => `${name}-${++n}`;

describe('the integrity scan', () => {
  it('finds a network made through the API clean, over 1 and 4 segments', async () => {
    const service = await createdId('/services', { name: unique('svc'), roleAttributes: ['web'] });
    await createdId('/identities', { name: unique('id'), type: 'User', isAdmin: false, roleAttributes: ['staff'] });
    await createdId('/edge-routers', { name: unique('er'), roleAttributes: ['edge'] });
    await createdId('/service-policies', {
      name: unique('sp'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#staff'],
      serviceRoles: [`@${service}`],
    });
    await createdId('/auth-policies', authPolicyBody(unique('ap')));
    expect(await run('check', 1)).toEqual([]);
    expect(await run('check', 4)).toEqual([]);
  });

  it('restores a deleted unique marker, so the name is unique again', async () => {
    const name = unique('marked');
    await createdId('/services', { name });
    await findAndFix(() => del('UNIQUE#services#name', name), /unique marker UNIQUE#services#name/);
    const again = await call('POST', '/services', { name });
    expect(again.status).toBe(400);
  });

  it('removes the markers, links, role members and index items of an entity item deleted by hand', async () => {
    const name = unique('gone');
    const id = await createdId('/identities', { name, type: 'User', isAdmin: false, roleAttributes: ['ghosts'] });
    await findAndFix(() => del(`identities#${id}`, 'META'), /identities .*does not exist|which does not exist/);
    // The name can be used again, the role filter is empty, the count is right.
    expect((await call('POST', '/identities', { name, type: 'User', isAdmin: false })).status).toBe(201);
    const listed = await call('GET', '/identities?roleFilter=%23ghosts');
    expect(listed.body.data).toEqual([]);
  });

  it('removes the role catalog entries of an entity item deleted by hand, whichever segment runs first', async () => {
    // The catalog partition and the role members' partitions fall in different segments; running them in both orders
    // makes the catalog's check come both before and after the stale members are removed.
    const segments = [0, 1, 2, 3];
    for (const order of [segments, [...segments].reverse()]) {
      const attributes = ['a', 'b', 'c', 'd', 'e', 'f'].map((letter) => unique(`lost-${letter}`));
      const id = await createdId('/identities', {
        name: unique('lost'),
        type: 'User',
        isAdmin: false,
        roleAttributes: attributes,
      });
      expect(await run('check')).toEqual([]);
      await del(`identities#${id}`, 'META');
      expect((await runInOrder('check', order)).length).toBeGreaterThan(0);
      expectAllFixed(await runInOrder('fix', order));
      expect(await run('check')).toEqual([]);
      const catalog = await call('GET', '/identity-role-attributes?limit=500');
      expect(catalog.body.data).not.toEqual(expect.arrayContaining([expect.stringMatching(/^lost-/)]));
    }
  });

  it('removes every cascade child of an identity item deleted by hand, each fix written', async () => {
    const children: { identity: string; authenticator: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const name = unique('orphaning');
      const identity = await createdId('/identities', {
        name,
        type: 'User',
        isAdmin: false,
        roleAttributes: [unique('orphaning-role')],
        enrollment: { ott: true },
      });
      const authenticator = await createdId('/authenticators', {
        identityId: identity,
        method: 'updb',
        username: name,
        password: 'Child-Passw0rd!',
      });
      children.push({ identity, authenticator });
    }
    await findAndFix(async () => {
      for (const { identity } of children) await del(`identities#${identity}`, 'META');
    }, /authenticator .* belongs to a identities/);
    for (const { identity, authenticator } of children) {
      expect((await call('GET', `/authenticators/${authenticator}`)).status).toBe(404);
      const enrollments = await call('GET', `/enrollments?filter=${encodeURIComponent(`identityId = "${identity}"`)}`);
      expect(enrollments.body.data).toEqual([]);
    }
  });

  it('puts back a dropped role member, so the role filter finds the entity again', async () => {
    const id = await createdId('/services', { name: unique('roled'), roleAttributes: ['finance'] });
    await findAndFix(() => del('ROLE#services#finance', id), /role member ROLE#services#finance/);
    const listed = await call('GET', '/services?roleFilter=%23finance');
    expect(listed.body.data.map((service: { id: string }) => service.id)).toEqual([id]);
  });

  it('keeps the catalog entry of an attribute whose only member was dropped, whichever segment runs first', async () => {
    // The catalog's check sees nobody holding the attribute (its one member item is gone) and prunes the entry; the
    // member put back by the same fix must bring the entry back, in either order of the segments.
    const segments = [0, 1, 2, 3];
    for (const order of [segments, [...segments].reverse()]) {
      const attribute = unique('sole');
      const id = await createdId('/services', { name: unique('sole-holder'), roleAttributes: [attribute] });
      expect(await run('check')).toEqual([]);
      await del(`ROLE#services#${attribute}`, id);
      expect((await runInOrder('check', order)).length).toBeGreaterThan(0);
      expectAllFixed(await runInOrder('fix', order));
      expect(await run('check')).toEqual([]);
      const catalog = await call('GET', '/service-role-attributes?limit=500');
      expect(catalog.body.data).toContain(attribute);
    }
  });

  it('removes a dangling reference link, so the target can be deleted again', async () => {
    const configType = await createdId('/config-types', { name: unique('ct') });
    await findAndFix(
      () =>
        putItem({
          PK: `config-types#${configType}`,
          SK: 'REFBY#configs#no-such-config#configTypeId',
          onTargetDelete: 'refuse',
        }),
      /REFBY#configs#no-such-config/,
    );
    expect((await call('DELETE', `/config-types/${configType}`)).status).toBe(200);
  });

  it('recounts a skewed counter, so the summary is right', async () => {
    await createdId('/services', { name: unique('counted') });
    await findAndFix(
      () =>
        db().send(
          new UpdateCommand({
            TableName: TableName(),
            Key: { PK: 'COUNT#services', SK: 'SHARD#3' },
            UpdateExpression: 'ADD #c :d',
            ExpressionAttributeNames: { '#c': 'count' },
            ExpressionAttributeValues: { ':d': 7 },
          }),
        ),
      /the services counter says/,
    );
    const listed = await call('GET', '/services?limit=1');
    const summary = await call('GET', '/summary');
    expect(summary.body.data.services).toBe(listed.body.meta.pagination.totalCount);
  });

  it('puts back a dropped policy selection, so the policy selects again', async () => {
    const service = await createdId('/services', { name: unique('sel-svc') });
    const identity = await createdId('/identities', { name: unique('sel-id'), type: 'User', isAdmin: false });
    const policy = await createdId('/service-policies', {
      name: unique('sel-sp'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${identity}`],
      serviceRoles: [`@${service}`],
    });
    await findAndFix(() => del(`SELECT#identities#@${identity}`, `service-policies#${policy}`), /policy selection/);
    const services = await call('GET', `/identities/${identity}/services`);
    expect(services.body.data.map((entry: { id: string }) => entry.id)).toEqual([service]);
  });

  it('takes out of a policy the @id of an entity item deleted by hand, keeping its other roles', async () => {
    const service = await createdId('/services', { name: unique('named-gone') });
    const policy = await createdId('/service-policies', {
      name: unique('named-gone-sp'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#named-gone-people'],
      serviceRoles: [`@${service}`, '#named-gone-apps'],
    });
    await findAndFix(() => del(`services#${service}`, 'META'), /names by @id what no longer exists: services/);
    const detail = await call('GET', `/service-policies/${policy}`);
    expect(detail.body.data).toMatchObject({
      identityRoles: ['#named-gone-people'],
      serviceRoles: ['#named-gone-apps'],
    });
  });

  it('restores a missing id-order item and a stale filter record, so lists and filters find the entity', async () => {
    const name = unique('listed');
    const id = await createdId('/services', { name });
    const findByName = async () => {
      const found = await call('GET', `/services?filter=${encodeURIComponent(`name contains "${name}"`)}`);
      return found.body.data.map((service: { id: string }) => service.id);
    };
    await findAndFix(() => del('IDS#services', id), /id-order item IDS#services \/ .* is missing/);
    expect(await findByName()).toEqual([id]);
    const staleRecord = () =>
      db().send(
        new UpdateCommand({
          TableName: TableName(),
          Key: { PK: 'IDS#services', SK: id },
          UpdateExpression: 'SET #record = :record',
          ExpressionAttributeNames: { '#record': 'record' },
          ExpressionAttributeValues: { ':record': JSON.stringify({ id, name: 'someone-else' }) },
        }),
      );
    await findAndFix(async () => {
      await staleRecord();
      expect(await findByName()).toEqual([]);
    }, /id-order item IDS#services \/ .* is out of date/);
    expect(await findByName()).toEqual([id]);
  });

  it('rewrites an id-order item of the per-attribute form in the one-attribute form, and removes retired filter packs', async () => {
    const name = unique('old-form');
    const id = await createdId('/services', { name });
    // Before records were one JSON attribute, each field was an attribute of its own; filters still read those.
    const { Item } = await db().send(new GetCommand({ TableName: TableName(), Key: { PK: 'IDS#services', SK: id } }));
    const { record, ...key } = Item!;
    const fields = JSON.parse(String(record)) as Record<string, unknown>;
    const perAttribute = { ...storedAttributes(fields), ...key };
    await findAndFix(async () => {
      await putItem(perAttribute);
      await putItem({ PK: 'FILTERS#services', SK: '0a1', [`r:${id}`]: JSON.stringify(fields) });
      const found = await call('GET', `/services?filter=${encodeURIComponent(`name contains "${name}"`)}`);
      expect(found.body.data.map((service: { id: string }) => service.id)).toEqual([id]);
    }, /FILTERS#services \/ 0a1 is a retired filter pack/);
    const fixed = await db().send(new GetCommand({ TableName: TableName(), Key: { PK: 'IDS#services', SK: id } }));
    expect(fixed.Item).toEqual(Item);
  });

  it('keeps documents in the type index only for types read whole, and moves a document there or out of it', async () => {
    const serviceId = await createdId('/services', { name: unique('no-type-index') });
    const checkId = await createdId('/posture-checks', {
      name: unique('in-type-index'),
      typeId: 'DOMAIN',
      domains: ['corp.example'],
      roleAttributes: [],
    });
    const itemOf = async (PK: string) =>
      (await db().send(new GetCommand({ TableName: TableName(), Key: { PK, SK: 'META' } }))).Item!;
    const service = await itemOf(`services#${serviceId}`);
    const check = await itemOf(`posture-checks#${checkId}`);
    // Services are never read whole: their documents stay out of GSI1 (a write unit per KB saved on every write).
    expect(service.GSI1PK).toBeUndefined();
    expect(check).toMatchObject({ GSI1PK: 'TYPE#posture-checks', GSI1SK: checkId });

    // A service written when every document entered the type index, and a check that lost its place there.
    const { GSI1PK: _pk, GSI1SK: _sk, ...checkOutOfIndex } = check;
    await findAndFix(async () => {
      await putItem({ ...service, GSI1PK: 'TYPE#services', GSI1SK: serviceId });
      await putItem(checkOutOfIndex);
    }, /carries index keys its type's layout does not give it/);
    expect(await itemOf(`services#${serviceId}`)).toEqual(service);
    expect(await itemOf(`posture-checks#${checkId}`)).toEqual(check);
  });

  it("removes the id pointer of an API session whose item DynamoDB's TTL deleted, and counts the session out", async () => {
    const identityId = await createdId('/identities', { name: unique('ttl'), type: 'User', isAdmin: false });
    const { deps } = controller();
    const { session, ops } = await createApiSessionOps(deps, {
      identityId,
      authenticatorId: 'ttl',
      endsWithAuthenticator: false,
      ipAddress: '127.0.0.1',
      openedOn: 'client',
      configTypes: [],
      totpPending: false,
      extJwtPending: false,
    });
    await deps.store.transact(ops);
    const pointer = { PK: `api-sessions#${session.id}`, SK: 'ID' };
    await findAndFix(
      () => del(`APISESSION#${session.tokenHash}`, 'META'),
      /api-sessions#.* points at an API session that no longer exists/,
    );
    expect((await db().send(new GetCommand({ TableName: TableName(), Key: pointer }))).Item).toBeUndefined();
  });

  it('deletes a child whose parent is gone', async () => {
    const identity = await createdId('/identities', { name: unique('parent'), type: 'User', isAdmin: false });
    const authenticator = await createdId('/authenticators', {
      identityId: identity,
      method: 'updb',
      username: unique('child'),
      password: 'Child-Passw0rd!',
    });
    await findAndFix(() => del(`identities#${identity}`, 'META'), /authenticator .* belongs to a identities/);
    expect((await call('GET', `/authenticators/${authenticator}`)).status).toBe(404);
  });

  it('removes the API sessions of an identity that is gone, and recounts them', async () => {
    const name = unique('session-owner');
    const identity = await createdId('/identities', { name, type: 'User', isAdmin: false });
    await createdId('/authenticators', {
      identityId: identity,
      method: 'updb',
      username: name,
      password: 'Owner-Passw0rd!',
    });
    const token = await controller().login(name, 'Owner-Passw0rd!');
    await findAndFix(() => del(`identities#${identity}`, 'META'), /API session .* belongs to identity/);
    expect((await controller().call('GET', `${M}/current-api-session`, { token })).status).toBe(401);
    const sessions = await call('GET', `/api-sessions?filter=${encodeURIComponent(`identityId = "${identity}"`)}`);
    expect(sessions.body.data).toEqual([]);
  });

  it('removes a Dial session whose API session is gone', async () => {
    const deps = controller().deps;
    const now = deps.now().toISOString();
    const id = unique('orphan-session');
    await deps.store.transact(
      deps.store.createOps(sessions, {
        id,
        createdAt: now,
        updatedAt: now,
        tags: {},
        token: 'orphan-token',
        type: 'Dial',
        identityId: 'gone-identity',
        apiSessionId: 'gone-api-session',
        serviceId: 'gone-service',
        servicePolicyIds: [],
      }),
    );
    const found = await run('check');
    expect(found).toEqual([
      { description: expect.stringMatching(/session .* belongs to API session gone-api-session/), fixed: false },
    ]);
    await run('fix');
    expect(await run('check')).toEqual([]);
    expect((await call('GET', `/sessions/${id}`)).status).toBe(404);
  });

  it('removes an ephemeral certificate whose API session is gone', async () => {
    const deps = controller().deps;
    const now = deps.now().toISOString();
    const id = unique('orphan-certificate');
    await deps.store.transact(
      deps.store.createOps(apiSessionCertificates, {
        id,
        createdAt: now,
        updatedAt: now,
        tags: {},
        apiSessionId: 'gone-api-session-2',
        identityId: 'gone-identity',
        subject: 'CN=orphan',
        fingerprint: `fp-${id}`,
        validFrom: now,
        validTo: now,
        certificate: 'PEM',
      }),
    );
    const found = await run('check');
    expect(found).toEqual([
      { description: expect.stringMatching(/belongs to API session gone-api-session-2/), fixed: false },
    ]);
    await run('fix');
    expect(await run('check')).toEqual([]);
    expect(await deps.store.get(apiSessionCertificates, id)).toBeUndefined();
  });

  it('removes an API session that outlived its TTL, and recounts', async () => {
    const deps = controller().deps;
    const identity = await createdId('/identities', { name: unique('overdue'), type: 'User', isAdmin: false });
    const { ops, session } = await createApiSessionOps(deps, {
      identityId: identity,
      authenticatorId: 'none',
      endsWithAuthenticator: false,
      ipAddress: '127.0.0.1',
      openedOn: 'client',
      configTypes: [],
      totpPending: false,
      extJwtPending: false,
    });
    await deps.store.transact(ops);
    await findAndFix(
      () =>
        db().send(
          new UpdateCommand({
            TableName: TableName(),
            Key: { PK: `APISESSION#${session.tokenHash}`, SK: 'META' },
            UpdateExpression: 'SET expiresAtEpoch = :past',
            ExpressionAttributeValues: { ':past': 1 },
          }),
        ),
      /API session .* expired long ago/,
    );
  });

  it('removes posture data whose API session is gone', async () => {
    await findAndFix(
      () => putItem({ PK: 'POSTURE#no-such-api-session', SK: 'DATA', data: '{}', version: 1 }),
      /posture data POSTURE#no-such-api-session/,
    );
  });

  it('removes the failed service requests of an identity that is gone', async () => {
    await findAndFix(
      () => putItem({ PK: 'FAILED-SESSIONS#no-such-identity', SK: 'DATA', failures: '[]', version: 1 }),
      /failed service requests FAILED-SESSIONS#no-such-identity/,
    );
  });

  it('finds nothing left of an identity deleted with its overrides and a policy naming it', async () => {
    const id = await createdId('/identities', { name: unique('deleted-identity'), type: 'User', isAdmin: false });
    const typeId = await createdId('/config-types', { name: unique('deleted-type'), schema: {} });
    const config = await createdId('/configs', { name: unique('deleted-config'), configTypeId: typeId, data: {} });
    const service = await createdId('/services', { name: unique('deleted-service'), configs: [config] });
    await createdId('/service-policies', {
      name: unique('deleted-policy'),
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`@${id}`],
      serviceRoles: [`@${service}`],
    });
    const pair = [{ serviceId: service, configId: config }];
    expect((await call('POST', `/identities/${id}/service-configs`, pair)).status).toBe(200);
    expect((await call('PATCH', `/identities/${id}`, { roleAttributes: ['deleted'] })).status).toBe(200);

    expect((await call('DELETE', `/identities/${id}`)).status).toBe(200);

    expect(await run('check')).toEqual([]);
  });

  it("removes identities' change markers kept as items of their own by earlier versions, live or gone", async () => {
    const live = await createdId('/identities', { name: unique('marked-identity'), type: 'User', isAdmin: false });
    const legacy = (id: string) => ({ PK: `CHANGED#service-access:@${id}`, SK: 'SHARD#0' });
    await putItem({ ...legacy(live), changedAt: new Date().toISOString() });
    await putItem({ ...legacy('gone-identity'), changedAt: new Date().toISOString() });

    const found = (await run('check')).map((finding) => finding.description);
    const fixed = await run('fix');

    expect(found.sort()).toEqual(
      [live, 'gone-identity']
        .map((id) => `CHANGED#service-access:@${id} / SHARD#0 is a retired identity's change marker item`)
        .sort(),
    );
    expectAllFixed(fixed);
    expect(await run('check')).toEqual([]);
    // The markers shared by many identities are no identity's: left alone.
    const shared = await db().send(
      new GetCommand({ TableName: TableName(), Key: { PK: 'CHANGED#service-access', SK: 'SHARD#0' } }),
    );
    expect(shared.Item).toBeDefined();
  });

  it('removes a role catalog entry nobody holds, and restores one in use', async () => {
    await createdId('/edge-routers', { name: unique('cat-er'), roleAttributes: ['catalogued'] });
    await findAndFix(() => putItem({ PK: 'ROLES#edge-routers', SK: 'nobody-holds-this' }), /nobody-holds-this/);
    await findAndFix(() => del('ROLES#edge-routers', 'catalogued'), /lacks #catalogued/);
    const roles = await call('GET', '/edge-router-role-attributes');
    expect(roles.body.data).toContain('catalogued');
  });
});
