import { describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';
import type { HttpResponse } from '../support/https-client.ts';
import { M } from '../support/management-fixtures.ts';
import { storeApiSessions } from '../support/stored-api-sessions.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';

const TIMEOUT_MINUTES = 5;
const { controller, relogin, call, createdId } = useAdminController({
  apiSessionTimeoutMinutes: TIMEOUT_MINUTES,
});

let userSequence = 0;

/** A non-admin identity with a password, made through the API; returns its id and credentials. */
async function createUser() {
  const name = `session-user-${++userSequence}`;
  const identityId = await createdId('/identities', { name, type: 'User', isAdmin: false });
  const username = `${name}-login`;
  const password = `${name}-password`;
  await createdId('/authenticators', { identityId, method: 'updb', username, password });
  return { identityId, name, username, password };
}

/** Logs in and returns the new session's id and token. */
async function logIn(username: string, password: string): Promise<{ id: string; token: string }> {
  const token = await controller().login(username, password);
  const current = await controller().call('GET', `${M}/current-api-session`, { token });
  return { id: current.body.data.id as string, token };
}

const filterOf = (filter: string) => `filter=${encodeURIComponent(filter)}`;

function sessionIds(response: HttpResponse): string[] {
  return response.body.data.map((session: { id: string }) => session.id);
}

describe('GET /api-sessions', () => {
  it('lists live sessions in the admin view, without their tokens', async () => {
    const user = await createUser();
    const session = await logIn(user.username, user.password);

    const response = await call('GET', `/api-sessions?${filterOf(`identityId = "${user.identityId}"`)}`);

    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(1);
    expect(response.body.data[0]).toMatchObject({
      id: session.id,
      identityId: user.identityId,
      identity: { entity: 'identities', id: user.identityId, name: user.name },
      token: '',
      isMfaRequired: false,
      isMfaComplete: false,
      _links: { self: { href: `./api-sessions/${session.id}` } },
    });
    expect(response.body.data[0]).not.toHaveProperty('tokenHash');
    expect(response.body.data[0]).not.toHaveProperty('totpPending');
    expect(response.text).not.toContain(session.token);
    expect(response.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 1 });
    expectMatchesSpec('management', 'GET', '/api-sessions', 200, response.body);
  });

  it('finds a session by id (sessions are keyed by token hash, not by id)', async () => {
    const user = await createUser();
    const session = await logIn(user.username, user.password);

    const response = await call('GET', `/api-sessions?${filterOf(`id = "${session.id}"`)}`);

    expect(sessionIds(response)).toEqual([session.id]);
  });

  it('filters, sorts and pages', async () => {
    const user = await createUser();
    const first = await logIn(user.username, user.password);
    const second = await logIn(user.username, user.password);
    const third = await logIn(user.username, user.password);
    const filter = filterOf(`identityId = "${user.identityId}" sort by createdAt desc, id`);

    const page1 = await call('GET', `/api-sessions?${filter}&limit=2`);
    const page2 = await call('GET', `/api-sessions?${filter}&limit=2&offset=2`);

    expect(page1.body.meta.pagination).toEqual({ limit: 2, offset: 0, totalCount: 3 });
    expect([...sessionIds(page1), ...sessionIds(page2)].sort()).toEqual([first.id, second.id, third.id].sort());
    expect(sessionIds(page2)).toHaveLength(1);
    const createdAt = [...page1.body.data, ...page2.body.data].map((s: { createdAt: string }) => s.createdAt);
    expect(createdAt).toEqual([...createdAt].sort().reverse());
  });

  it('lists every live session without a filter, the caller own included', async () => {
    const response = await call('GET', '/api-sessions?limit=500');

    expect(response.status).toBe(200);
    expect(response.body.data.length).toBeGreaterThan(0);
    expect(response.body.meta.pagination.totalCount).toBe(response.body.data.length);
    expect(response.body.meta.filterableFields).toEqual(
      expect.arrayContaining(['id', 'identityId', 'ipAddress', 'lastActivityAt', 'authenticatorId', 'isMfaRequired']),
    );
    expect(response.body.meta.filterableFields).not.toContain('tokenHash');
    expectMatchesSpec('management', 'GET', '/api-sessions', 200, response.body);
  });

  it('answers 400 INVALID_FILTER for a filter on the token hash', async () => {
    const response = await call('GET', `/api-sessions?${filterOf('tokenHash = "x"')}`);

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('INVALID_FILTER');
    expectMatchesSpec('management', 'GET', '/api-sessions', 400, response.body);
  });
});

describe('GET /api-sessions/{id}', () => {
  it('answers the session in the admin view', async () => {
    const user = await createUser();
    const session = await logIn(user.username, user.password);

    const response = await call('GET', `/api-sessions/${session.id}`);

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: session.id, identityId: user.identityId, token: '' });
    expect(response.text).not.toContain(session.token);
    expectMatchesSpec('management', 'GET', '/api-sessions/{id}', 200, response.body);
  });

  it('answers 404 for an unknown id', async () => {
    const response = await call('GET', '/api-sessions/no-such-session');

    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
    expectMatchesSpec('management', 'GET', '/api-sessions/{id}', 404, response.body);
  });
});

describe('DELETE /api-sessions/{id}', () => {
  it('ends the session: its token stops working at once, and it is no longer listed or found', async () => {
    const user = await createUser();
    const session = await logIn(user.username, user.password);

    const response = await call('DELETE', `/api-sessions/${session.id}`);

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({});
    expectMatchesSpec('management', 'DELETE', '/api-sessions/{id}', 200, response.body);
    const withToken = await controller().call('GET', `${M}/current-api-session`, { token: session.token });
    expect(withToken.status).toBe(401);
    expect(withToken.body.error.code).toBe('UNAUTHORIZED');
    expect((await call('GET', `/api-sessions/${session.id}`)).status).toBe(404);
    const listed = await call('GET', `/api-sessions?${filterOf(`identityId = "${user.identityId}"`)}`);
    expect(listed.body.data).toEqual([]);
  });

  it('leaves the identity other sessions alone', async () => {
    const user = await createUser();
    const ended = await logIn(user.username, user.password);
    const kept = await logIn(user.username, user.password);

    await call('DELETE', `/api-sessions/${ended.id}`);

    const withKept = await controller().call('GET', `${M}/current-api-session`, { token: kept.token });
    expect(withKept.status).toBe(200);
    expect(withKept.body.data.id).toBe(kept.id);
  });

  it('answers 404 for an unknown id and for a session already ended', async () => {
    const user = await createUser();
    const session = await logIn(user.username, user.password);
    await call('DELETE', `/api-sessions/${session.id}`);

    const again = await call('DELETE', `/api-sessions/${session.id}`);
    const unknown = await call('DELETE', '/api-sessions/no-such-session');

    expect(again.status).toBe(404);
    expect(unknown.status).toBe(404);
    expectMatchesSpec('management', 'DELETE', '/api-sessions/{id}', 404, unknown.body);
  });
});

describe('access', () => {
  it.each([
    ['GET', '/api-sessions'],
    ['GET', '/api-sessions/{id}'],
    ['DELETE', '/api-sessions/{id}'],
  ])('%s %s answers 401 to a non-admin, and ends nothing', async (method, template) => {
    const user = await createUser();
    const session = await logIn(user.username, user.password);

    const response = await call(method, template.replace('{id}', session.id), undefined, session.token);

    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('UNAUTHORIZED');
    expectMatchesSpec('management', method, template, 401, response.body);
    expect((await call('GET', `/api-sessions/${session.id}`)).status).toBe(200);
  });

  it('answers 401 without a session', async () => {
    const response = await controller().call('GET', `${M}/api-sessions`);

    expect(response.status).toBe(401);
  });
});

describe('expired sessions', () => {
  it('are neither listed, found nor deletable once idle past the timeout', async () => {
    const user = await createUser();
    const session = await logIn(user.username, user.password);

    controller().advanceClock((TIMEOUT_MINUTES + 1) * 60_000);
    await relogin();

    const listed = await call('GET', `/api-sessions?${filterOf(`identityId = "${user.identityId}"`)}`);
    const all = await call('GET', '/api-sessions?limit=500');
    expect(listed.body.data).toEqual([]);
    expect(listed.body.meta.pagination.totalCount).toBe(0);
    expect(sessionIds(all)).not.toContain(session.id);
    expect((await call('GET', `/api-sessions/${session.id}`)).status).toBe(404);
    expect((await call('DELETE', `/api-sessions/${session.id}`)).status).toBe(404);
  });

  it('are listed while still inside the timeout', async () => {
    const user = await createUser();
    const session = await logIn(user.username, user.password);

    controller().advanceClock((TIMEOUT_MINUTES - 1) * 60_000);
    await relogin();

    expect((await call('GET', `/api-sessions/${session.id}`)).status).toBe(200);
    const listed = await call('GET', `/api-sessions?${filterOf(`identityId = "${user.identityId}"`)}`);
    expect(sessionIds(listed)).toEqual([session.id]);
  });
});

describe('what a login stores', () => {
  const authenticate = (body: Record<string, unknown>) =>
    controller().call('POST', `${M}/authenticate?method=password`, {
      body: { username: ADMIN_USERNAME, password: ADMIN_PASSWORD, ...body },
    });

  it('takes up to 32 config types of up to 64 characters, each kept once', async () => {
    const configTypes = Array.from({ length: 32 }, (_, i) => `${String(i).padStart(2, '0')}${'x'.repeat(62)}`);

    const response = await authenticate({ configTypes: [...configTypes.slice(0, 30), configTypes[0], configTypes[1]] });
    const all = await authenticate({ configTypes });

    expect(response.status).toBe(200);
    expect(response.body.data.configTypes).toEqual(configTypes.slice(0, 30));
    expect(all.status).toBe(200);
    expect(all.body.data.configTypes).toEqual(configTypes);
  });

  it.each([
    ['more than 32 config types', { configTypes: Array.from({ length: 33 }, (_, i) => `type-${i}`) }, 'configTypes'],
    ['a config type over 64 characters', { configTypes: ['intercept.v1', 'x'.repeat(65)] }, 'configTypes.1'],
  ])('answers 400 naming the field for %s', async (_, body, field) => {
    const response = await authenticate(body);

    expectCouldNotValidate(response, field, { api: 'management', method: 'POST', path: '/authenticate' });
  });
});

describe('a disabled identity', () => {
  it('has its sessions end at once, and they stay ended once it is enabled again', async () => {
    const user = await createUser();
    const sessions = [await logIn(user.username, user.password), await logIn(user.username, user.password)];

    const disabled = await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 });
    const whileDisabled = await controller().call('GET', `${M}/current-api-session`, { token: sessions[0]!.token });
    const enabled = await call('POST', `/identities/${user.identityId}/enable`);

    expect(disabled.status).toBe(200);
    expect(whileDisabled.status).toBe(401);
    expect(enabled.status).toBe(200);
    for (const session of sessions) {
      const afterEnable = await controller().call('GET', `${M}/current-api-session`, { token: session.token });
      expect(afterEnable.status).toBe(401);
      expect((await call('GET', `/api-sessions/${session.id}`)).status).toBe(404);
    }
    const fresh = await logIn(user.username, user.password);
    expect((await controller().call('GET', `${M}/current-api-session`, { token: fresh.token })).status).toBe(200);
    const listed = await call('GET', `/api-sessions?${filterOf(`identityId = "${user.identityId}"`)}`);
    expect(sessionIds(listed)).toEqual([fresh.id]);
  });

  it('has every session end, more than one transaction removes, and none comes back on enable', async () => {
    const user = await createUser();
    const tokens = (await storeApiSessions(controller().deps, user.identityId, 60)).map((session) => session.token);

    await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 });
    await call('POST', `/identities/${user.identityId}/enable`);

    for (const token of tokens) {
      expect((await controller().call('GET', `${M}/current-api-session`, { token })).status).toBe(401);
    }
    const listed = await call('GET', `/api-sessions?${filterOf(`identityId = "${user.identityId}"`)}`);
    expect(listed.body.data).toEqual([]);
    expect(listed.body.meta.pagination.totalCount).toBe(0);
  });
});
