import { describe, expect, it } from 'vitest';
import { PREFIXES } from '#shared/store/keys.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';
import { M } from '../support/management-fixtures.ts';
import { storeApiSessions } from '../support/stored-api-sessions.ts';
import { tableItemCount, tableItems } from '../support/table-items.ts';

const { controller, admin, relogin, call, createdId } = useAdminController({ apiSessionTimeoutMinutes: 30 });

const createIdentity = (body: Record<string, unknown>): Promise<string> =>
  createdId('/identities', { type: 'User', isAdmin: false, ...body });

/** A non-admin identity with a password login. */
async function identityWithLogin(name: string): Promise<{ id: string; username: string; password: string }> {
  const id = await createIdentity({ name });
  const username = `${name}-user`;
  const password = `${name}-password`;
  await createdId('/authenticators', { identityId: id, method: 'updb', username, password });
  return { id, username, password };
}

describe('create and retrieve', () => {
  it('creates an identity and answers 201 with its id and relative self link', async () => {
    const response = await call('POST', '/identities', { name: 'laptop-1', type: 'Device', isAdmin: false });

    expect(response.status).toBe(201);
    expect(response.body.data._links.self.href).toBe(`./identities/${response.body.data.id}`);
    expectMatchesSpec('management', 'POST', '/identities', 201, response.body);

    const detail = await call('GET', `/identities/${response.body.data.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({
      name: 'laptop-1',
      typeId: 'Default',
      type: { id: 'Default', entity: 'identity-types' },
      isAdmin: false,
      isDefaultAdmin: false,
      authPolicyId: 'default',
      authPolicy: { id: 'default', name: 'Default' },
      roleAttributes: [],
      authenticators: {},
      enrollment: {},
      hasApiSession: false,
      disabled: false,
      externalId: null,
    });
    expectMatchesSpec('management', 'GET', '/identities/{id}', 200, detail.body);
  });

  it('keeps every field it was given', async () => {
    const id = await createIdentity({
      name: 'full-identity',
      type: 'Router',
      isAdmin: true,
      externalId: 'ext-123',
      roleAttributes: ['sales', 'emea'],
      appData: { team: 'blue' },
      defaultHostingCost: 42,
      defaultHostingPrecedence: 'required',
      serviceHostingCosts: { svc1: 7 },
      serviceHostingPrecedences: { svc1: 'failed' },
      tags: { env: 'prod', managed: true },
    });

    const detail = await call('GET', `/identities/${id}`);

    expect(detail.body.data).toMatchObject({
      typeId: 'Router',
      isAdmin: true,
      externalId: 'ext-123',
      roleAttributes: ['sales', 'emea'],
      appData: { team: 'blue' },
      defaultHostingCost: 42,
      defaultHostingPrecedence: 'required',
      serviceHostingCosts: { svc1: 7 },
      serviceHostingPrecedences: { svc1: 'failed' },
      tags: { env: 'prod', managed: true },
    });
  });

  it('creates the outstanding enrollments asked for', async () => {
    const id = await createIdentity({ name: 'enrolling', enrollment: { ott: true, updb: 'enrolling-user' } });

    const detail = await call('GET', `/identities/${id}`);
    const enrollments = await call('GET', `/identities/${id}/enrollments`);

    expect(detail.body.data.enrollment.ott.token).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(detail.body.data.enrollment.updb.expiresAt)).toBeGreaterThan(Date.now() + 170 * 60_000);
    expect(enrollments.status).toBe(200);
    expect(enrollments.body.data.map((e: { method: string }) => e.method).sort()).toEqual(['ott', 'updb']);
    expect(enrollments.body.data.find((e: { method: string }) => e.method === 'updb').username).toBe('enrolling-user');
    expectMatchesSpec('management', 'GET', '/identities/{id}/enrollments', 200, enrollments.body);
  });

  it('creates an identity with several enrollments in one transaction, every time', async () => {
    // Each entity written bumps its type's counter; two enrollments in one write must not name one counter twice.
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call('POST', '/identities', {
          name: `multi-enroll-${i}`,
          type: 'User',
          isAdmin: false,
          enrollment: { ott: true, updb: `multi-enroll-user-${i}` },
        }).then((response) => response.status),
      ),
    );

    expect(statuses).toEqual(Array(12).fill(201));
  });

  it('takes names and external ids up to 255 characters, multi-byte ones included', async () => {
    const long = await call('POST', '/identities', {
      name: '€'.repeat(255),
      externalId: '€'.repeat(255),
      type: 'User',
      isAdmin: false,
    });
    const tooLong = await call('POST', '/identities', { name: 'x'.repeat(256), type: 'User', isAdmin: false });

    expect(long.status).toBe(201);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.cause.field).toBe('name');
  });

  it('answers 404 NOT_FOUND for an unknown id', async () => {
    for (const [method, path, body] of [
      ['GET', '/identities/nope', undefined],
      ['PUT', '/identities/nope', { name: 'x', type: 'User', isAdmin: false }],
      ['PATCH', '/identities/nope', { name: 'x' }],
      ['DELETE', '/identities/nope', undefined],
      ['POST', '/identities/nope/disable', { durationMinutes: 0 }],
      ['POST', '/identities/nope/enable', undefined],
      ['GET', '/identities/nope/authenticators', undefined],
      ['GET', '/identities/nope/enrollments', undefined],
    ] as const) {
      const response = await call(method, path, body);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
  });
});

describe('bad input', () => {
  it.each([
    ['missing name', { type: 'User', isAdmin: false }, 'name'],
    ['missing type', { name: 'n1', isAdmin: false }, 'type'],
    ['missing isAdmin', { name: 'n2', type: 'User' }, 'isAdmin'],
    ['a name that is not a string', { name: 5, type: 'User', isAdmin: false }, 'name'],
    ['an empty name', { name: '', type: 'User', isAdmin: false }, 'name'],
    ['an unknown type', { name: 'n3', type: 'Robot', isAdmin: false }, 'type'],
    ['isAdmin as a string', { name: 'n4', type: 'User', isAdmin: 'yes' }, 'isAdmin'],
    [
      'a role attribute written as a role',
      { name: 'n5', type: 'User', isAdmin: false, roleAttributes: ['#sales'] },
      'roleAttributes.0',
    ],
    [
      'role attributes that are not a list',
      { name: 'n6', type: 'User', isAdmin: false, roleAttributes: 'sales' },
      'roleAttributes',
    ],
    [
      'a cost above 65535',
      { name: 'n7', type: 'User', isAdmin: false, defaultHostingCost: 70000 },
      'defaultHostingCost',
    ],
    [
      'an unknown precedence',
      { name: 'n8', type: 'User', isAdmin: false, defaultHostingPrecedence: 'high' },
      'defaultHostingPrecedence',
    ],
    ['a tag value that is a number', { name: 'n9', type: 'User', isAdmin: false, tags: { n: 1 } }, 'tags.n'],
    ['an unknown auth policy', { name: 'n10', type: 'User', isAdmin: false, authPolicyId: 'nope' }, 'authPolicyId'],
    [
      'an ottca enrollment with an unknown CA',
      { name: 'n11', type: 'User', isAdmin: false, enrollment: { ottca: 'nope' } },
      'enrollment.ottca',
    ],
    [
      'a too short updb username',
      { name: 'n12', type: 'User', isAdmin: false, enrollment: { updb: 'ab' } },
      'enrollment.updb',
    ],
    ['permissions', { name: 'n13', type: 'User', isAdmin: false, permissions: ['identity'] }, 'permissions'],
    [
      'more than 32 role attributes',
      { name: 'n14', type: 'User', isAdmin: false, roleAttributes: Array.from({ length: 33 }, (_, i) => `r${i}`) },
      'roleAttributes',
    ],
  ])('answers 400 COULD_NOT_VALIDATE for %s, naming the field, and writes nothing', async (_case, body, field) => {
    const before = await tableItemCount(controller().deps);

    const response = await call('POST', '/identities', body);

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/identities' });
    expect(await tableItemCount(controller().deps)).toBe(before);
  });

  it('answers 400 COULD_NOT_PARSE_BODY for a body that is not JSON', async () => {
    const response = await controller().call('POST', `${M}/identities`, {
      token: admin(),
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('COULD_NOT_PARSE_BODY');
  });
});

describe('unique names', () => {
  it('refuses a second identity with the same name, naming the field', async () => {
    await createIdentity({ name: 'twin' });

    const response = await call('POST', '/identities', { name: 'twin', type: 'User', isAdmin: false });

    expect(response.status).toBe(400);
    expect(response.body.error.cause).toMatchObject({ field: 'name', value: 'twin' });
  });

  it('lets exactly one of twenty concurrent creates of one name win, leaving no stray marker', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        call('POST', '/identities', { name: 'contended', type: 'User', isAdmin: false }),
      ),
    );

    const winners = responses.filter((r) => r.status === 201);
    expect(winners).toHaveLength(1);
    expect(responses.filter((r) => r.status === 400)).toHaveLength(19);
    const listed = await call('GET', `/identities?filter=${encodeURIComponent('name = "contended"')}`);
    expect(listed.body.data).toHaveLength(1);
    const markers = (await tableItems(controller().deps)).filter(
      (item) => item.PK === 'UNIQUE#identities#name' && item.SK === 'contended',
    );
    expect(markers).toEqual([expect.objectContaining({ entityId: winners[0]!.body.data.id })]);
  });

  it('frees a name when the identity is renamed', async () => {
    const id = await createIdentity({ name: 'old-name' });

    await call('PATCH', `/identities/${id}`, { name: 'new-name' });

    expect((await call('POST', '/identities', { name: 'old-name', type: 'User', isAdmin: false })).status).toBe(201);
    expect((await call('POST', '/identities', { name: 'new-name', type: 'User', isAdmin: false })).status).toBe(400);
  });
});

describe('replace and patch', () => {
  it('PATCH changes only the keys sent', async () => {
    const id = await createIdentity({ name: 'patch-me', roleAttributes: ['a'], tags: { keep: 'yes' } });

    const response = await call('PATCH', `/identities/${id}`, { name: 'patched' });

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({});
    expectMatchesSpec('management', 'PATCH', '/identities/{id}', 200, response.body);
    const detail = await call('GET', `/identities/${id}`);
    expect(detail.body.data).toMatchObject({ name: 'patched', roleAttributes: ['a'], tags: { keep: 'yes' } });
  });

  it('PATCH with null clears a field, and a type or policy change sticks', async () => {
    const id = await createIdentity({
      name: 'patch-nulls',
      roleAttributes: ['a'],
      externalId: 'ext-nulls',
      defaultHostingCost: 5,
    });

    const response = await call('PATCH', `/identities/${id}`, {
      roleAttributes: null,
      externalId: null,
      type: 'Router',
    });

    expect(response.status).toBe(200);
    const detail = await call('GET', `/identities/${id}`);
    expect(detail.body.data).toMatchObject({
      name: 'patch-nulls',
      roleAttributes: [],
      externalId: null,
      typeId: 'Router',
      defaultHostingCost: 5,
    });
  });

  it('PUT replaces: fields left out return to their defaults, authenticators and enrollments stay', async () => {
    const id = await createIdentity({
      name: 'put-me',
      roleAttributes: ['a'],
      defaultHostingCost: 9,
      enrollment: { ott: true },
    });

    const response = await call('PUT', `/identities/${id}`, { name: 'put-done', type: 'User', isAdmin: true });

    expect(response.status).toBe(200);
    expectMatchesSpec('management', 'PUT', '/identities/{id}', 200, response.body);
    const detail = await call('GET', `/identities/${id}`);
    expect(detail.body.data).toMatchObject({
      name: 'put-done',
      isAdmin: true,
      roleAttributes: [],
      defaultHostingCost: 0,
    });
    expect(detail.body.data.enrollment.ott).toBeDefined();
  });

  it('PUT needs name, type and isAdmin', async () => {
    const id = await createIdentity({ name: 'put-invalid' });

    const response = await call('PUT', `/identities/${id}`, { name: 'x' });

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('type');
  });

  it('keeps the default admin an admin', async () => {
    const me = await call('GET', '/current-identity');

    const response = await call('PATCH', `/identities/${me.body.data.id}`, { isAdmin: false });

    expect(response.status).toBe(400);
    expect(response.body.error.cause.field).toBe('isAdmin');
  });
});

/** Every item of the table that names `id` anywhere. */
async function itemsNaming(id: string) {
  return (await tableItems(controller().deps)).filter((item) => JSON.stringify(item).includes(id));
}

/**
 * An entry of the API session change log the routers' endpoints read (a login's, an end's): a record of what
 * happened, not state of the identity, which expires by itself within the hour (TTL).
 */
function isSessionChange(item: Record<string, unknown>): boolean {
  return String(item.PK).startsWith(PREFIXES.ctrlChanges);
}

describe('delete', () => {
  it('removes the identity with its authenticators, enrollments and API sessions', async () => {
    const id = await createIdentity({
      name: 'doomed',
      enrollment: { ott: true },
      roleAttributes: ['doomed-a', 'doomed-b'],
    });
    const authenticator = await call('POST', '/authenticators', {
      identityId: id,
      method: 'updb',
      username: 'doomed-user',
      password: 'doomed-password',
    });
    expect(authenticator.status).toBe(201);
    const token = await controller().login('doomed-user', 'doomed-password');

    const response = await call('DELETE', `/identities/${id}`);

    expect(response.status).toBe(200);
    expectMatchesSpec('management', 'DELETE', '/identities/{id}', 200, response.body);
    expect((await call('GET', `/identities/${id}`)).status).toBe(404);
    const leftovers = (await itemsNaming(id)).filter((item) => !isSessionChange(item));
    expect(leftovers, JSON.stringify(leftovers)).toEqual([]);
    expect((await call('GET', '/current-api-session', undefined, token)).status).toBe(401);
  });

  it('ends every API session even when there are more than one transaction holds', async () => {
    const id = await createIdentity({ name: 'many-sessions' });
    await storeApiSessions(controller().deps, id, 60);
    expect((await call('GET', `/identities/${id}`)).body.data.hasApiSession).toBe(true);

    const disabled = await call('POST', `/identities/${id}/disable`, { durationMinutes: 0 });
    const deleted = await call('DELETE', `/identities/${id}`);

    expect(disabled.status).toBe(200);
    expect(deleted.status).toBe(200);
    const leftovers = (await itemsNaming(id)).filter((item) => !isSessionChange(item));
    expect(leftovers).toEqual([]);
  });

  it('refuses to delete the default admin', async () => {
    const me = await call('GET', '/current-identity');

    const response = await call('DELETE', `/identities/${me.body.data.id}`);

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('ENTITY_CAN_NOT_BE_DELETED');
  });
});

describe('disable and enable', () => {
  it('ends the API sessions, blocks login for the duration, then lets it in again', async () => {
    const { id, username, password } = await identityWithLogin('sleepy');
    const token = await controller().login(username, password);

    const response = await call('POST', `/identities/${id}/disable`, { durationMinutes: 10 });

    expect(response.status).toBe(200);
    expectMatchesSpec('management', 'POST', '/identities/{id}/disable', 200, response.body);
    expect((await call('GET', '/current-api-session', undefined, token)).status).toBe(401);
    const login = await controller().call('POST', `${M}/authenticate?method=password`, {
      body: { username, password },
    });
    expect(login.status).toBe(401);
    expect(login.body.error.code).toBe('INVALID_AUTH');
    const detail = await call('GET', `/identities/${id}`);
    expect(detail.body.data.disabled).toBe(true);
    expect(Date.parse(detail.body.data.disabledUntil) - Date.parse(detail.body.data.disabledAt)).toBe(10 * 60_000);

    controller().advanceClock(11 * 60_000);
    expect(
      (await controller().call('POST', `${M}/authenticate?method=password`, { body: { username, password } })).status,
    ).toBe(200);
  });

  it('with durationMinutes 0 disables until enabled', async () => {
    const { id, username, password } = await identityWithLogin('frozen');

    await call('POST', `/identities/${id}/disable`, { durationMinutes: 0 });
    controller().advanceClock(365 * 24 * 60 * 60_000);
    await relogin(); // a year later the admin's own session has long expired
    const blocked = await controller().call('POST', `${M}/authenticate?method=password`, {
      body: { username, password },
    });
    const enabled = await call('POST', `/identities/${id}/enable`);
    const allowed = await controller().call('POST', `${M}/authenticate?method=password`, {
      body: { username, password },
    });

    expect(blocked.status).toBe(401);
    expect(enabled.status).toBe(200);
    expectMatchesSpec('management', 'POST', '/identities/{id}/enable', 200, enabled.body);
    expect(allowed.status).toBe(200);
    const detail = await call('GET', `/identities/${id}`);
    expect(detail.body.data).toMatchObject({ disabled: false, disabledAt: null, disabledUntil: null });
  });

  it('needs an integer durationMinutes', async () => {
    const id = await createIdentity({ name: 'disable-invalid' });

    for (const body of [{}, { durationMinutes: 'ten' }, { durationMinutes: -1 }, { durationMinutes: 1.5 }]) {
      const response = await call('POST', `/identities/${id}/disable`, body);
      expect(response.status).toBe(400);
      expect(response.body.error.cause.field).toBe('durationMinutes');
    }
  });
});

describe('access', () => {
  it('answers 401 UNAUTHORIZED to a caller that is not an admin', async () => {
    const id = await createIdentity({ name: 'plain-user' });
    const created = await call('POST', '/authenticators', {
      identityId: id,
      method: 'updb',
      username: 'plain-user',
      password: 'plain-password',
    });
    expect(created.status).toBe(201);
    const token = await controller().login('plain-user', 'plain-password');

    for (const [method, path] of [
      ['GET', '/identities'],
      ['POST', '/identities'],
      ['GET', `/identities/${id}`],
      ['DELETE', `/identities/${id}`],
      ['GET', '/summary'],
      ['GET', '/identity-types'],
    ] as const) {
      const response = await call(
        method,
        path,
        method === 'POST' ? { name: 'x', type: 'User', isAdmin: true } : undefined,
        token,
      );
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.body.error.code).toBe('UNAUTHORIZED');
    }
  });
});

describe('tracing', () => {
  const trace = (id: string, body: unknown) => call('PUT', `/identities/${id}/trace`, body);

  it('starts a trace for a duration, under the trace id given or a new one, and stops it', async () => {
    const id = await createIdentity({ name: 'traced' });
    // Earlier tests moved the controller's clock: the trace ends by it.
    const before = controller().deps.now().getTime();

    const named = await trace(id, { enabled: true, duration: '1h30m', traceId: 'trace-1', channels: ['select.path'] });
    expect(named.status, named.text).toBe(200);
    expectMatchesSpec('management', 'PUT', '/identities/{id}/trace', 200, named.body);
    expect(named.body.data).toMatchObject({ enabled: true, traceId: 'trace-1' });
    const until = Date.parse(named.body.data.until);
    expect(until).toBeGreaterThanOrEqual(before + 90 * 60_000);
    expect(until).toBeLessThan(controller().deps.now().getTime() + 90 * 60_000 + 1000);

    const generated = await trace(id, { enabled: true, duration: '90s' });
    expect(generated.body.data.traceId).toMatch(/^[0-9a-f-]{36}$/);
    // Durations are Go's: decimal fractions and several units in one.
    for (const [duration, ms] of [
      ['1.5h', 90 * 60_000],
      ['2m30s', 150_000],
      ['1500ms', 1500],
    ] as const) {
      const now = controller().deps.now().getTime();
      const started = await trace(id, { enabled: true, duration });
      expect(Date.parse(started.body.data.until) - now, duration).toBeGreaterThanOrEqual(ms);
      expect(Date.parse(started.body.data.until) - now, duration).toBeLessThan(ms + 1000);
    }

    const stopped = await trace(id, { enabled: false });
    expect(stopped.status).toBe(200);
    expectMatchesSpec('management', 'PUT', '/identities/{id}/trace', 200, stopped.body);
    expect(stopped.body.data).toEqual({ enabled: false });
    // The identity is otherwise unchanged.
    expect((await call('GET', `/identities/${id}`)).body.data.name).toBe('traced');
  });

  it('stamps the trace id on the log lines of every request the identity makes, until the trace ends or is stopped', async () => {
    const { id, username, password } = await identityWithLogin('trace-logged');
    const token = await controller().login(username, password);
    const asTraced = () => controller().call('GET', '/edge/client/v1/current-identity', { token });
    /** The log lines written while `act` ran. */
    const linesOf = async (act: () => Promise<unknown>) => {
      const from = controller().logLines.length;
      await act();
      return controller()
        .logLines.slice(from)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    };

    const before = await linesOf(asTraced);
    const start = await linesOf(() => trace(id, { enabled: true, duration: '1m', traceId: 'trace-logged-1' }));
    const during = await linesOf(asTraced);
    const others = await linesOf(() => call('GET', `/identities/${id}`));
    controller().advanceClock(61_000);
    const after = await linesOf(asTraced);
    await trace(id, { enabled: true, duration: '1h', traceId: 'trace-logged-2' });
    const restarted = await linesOf(asTraced);
    const stop = await linesOf(() => trace(id, { enabled: false }));
    const stopped = await linesOf(asTraced);

    const request = (lines: Record<string, unknown>[]) => lines.find((line) => line.message === 'request');
    expect(request(during)).toMatchObject({ identityId: id, traceId: 'trace-logged-1', method: 'GET', status: 200 });
    expect(request(restarted)).toMatchObject({ identityId: id, traceId: 'trace-logged-2' });
    for (const lines of [before, others, after, stopped]) {
      expect(request(lines)).toBeDefined();
      expect(lines.filter((line) => 'traceId' in line)).toEqual([]);
    }
    expect(start).toContainEqual(
      expect.objectContaining({
        message: 'identity trace started',
        tracedIdentityId: id,
        traceId: 'trace-logged-1',
        channels: ['all'],
      }),
    );
    expect(stop).toContainEqual(expect.objectContaining({ message: 'identity trace stopped', tracedIdentityId: id }));
    // The identity's detail has no field for it (nor has the API document's).
    expect((await call('GET', `/identities/${id}`)).body.data).not.toHaveProperty('tracing');
  });

  it('needs a valid, bounded duration to start and a trace spec body', async () => {
    const id = await createIdentity({ name: 'trace-bad' });
    for (const [body, field] of [
      [{ enabled: true }, 'duration'],
      [{ enabled: true, duration: 'ten minutes' }, 'duration'],
      [{ enabled: true, duration: '0s' }, 'duration'],
      [{ enabled: true, duration: '-5m' }, 'duration'],
      [{ enabled: true, duration: '5' }, 'duration'],
      [{ enabled: true, duration: '25h' }, 'duration'],
      [{ enabled: 'yes' }, 'enabled'],
      [{ enabled: true, duration: '1m', channels: Array(17).fill('x') }, 'channels'],
      [undefined, '(root)'],
    ] as const) {
      const response = await trace(id, body);
      expectCouldNotValidate(response, field, { api: 'management', method: 'PUT', path: '/identities/{id}/trace' });
    }
  });

  it('answers 404 for an unknown identity', async () => {
    const response = await trace('no-such-identity', { enabled: false });
    expect(response.status).toBe(404);
    expectMatchesSpec('management', 'PUT', '/identities/{id}/trace', 404, response.body);
  });
});
