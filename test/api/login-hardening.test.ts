import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { authPolicyBody } from '../support/management-fixtures.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';

const { controller, call, createPolicy, userUnder, login } = useAdminController();
const MINUTE = 60_000;

describe('a disable is never undone or shortened by wrong passwords', () => {
  it('refuses a disabled identity before its password is checked or counted', async () => {
    const policyId = await createPolicy(authPolicyBody('lock-after-2', { maxAttempts: 2, lockoutDurationMinutes: 1 }));
    const user = await userUnder(policyId, 'disabled-for-good');
    await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 });

    for (let i = 0; i < 5; i++) expect((await login(user.username, 'wrong-password')).status).toBe(401);
    controller().advanceClock(5 * MINUTE);
    const withRightPassword = await login(user.username, user.password);
    const detail = await call('GET', `/identities/${user.identityId}`);

    expect(withRightPassword.status).toBe(401);
    expect(detail.body.data).toMatchObject({ disabled: true, disabledUntil: null });
  });

  it('does not count wrong passwords sent while disabled towards a later lockout', async () => {
    const policyId = await createPolicy(authPolicyBody('lock-after-3', { maxAttempts: 3, lockoutDurationMinutes: 60 }));
    const user = await userUnder(policyId, 'briefly-disabled');
    await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 1 });

    for (let i = 0; i < 5; i++) await login(user.username, 'wrong-password');
    controller().advanceClock(2 * MINUTE);
    expect((await login(user.username, 'wrong-password')).status).toBe(401);
    const afterOneMore = await login(user.username, user.password);

    expect(afterOneMore.status).toBe(200);
  });

  it('keeps an admin disable that races a lockout, whichever lands first', async () => {
    const policyId = await createPolicy(authPolicyBody('race-lock', { maxAttempts: 1, lockoutDurationMinutes: 1 }));
    for (let round = 0; round < 8; round++) {
      const user = await userUnder(policyId, `race-lock-${round}`);
      await Promise.all([
        login(user.username, 'wrong-password'),
        call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 }),
        login(user.username, 'wrong-password'),
      ]);
      const detail = await call('GET', `/identities/${user.identityId}`);
      expect(detail.body.data).toMatchObject({ disabled: true, disabledUntil: null });
    }
  });

  it('never shortens a longer lock with a shorter one', async () => {
    const policyId = await createPolicy(authPolicyBody('long-lock', { maxAttempts: 1, lockoutDurationMinutes: 600 }));
    const user = await userUnder(policyId, 'long-locked');
    await login(user.username, 'wrong-password');
    const locked = (await call('GET', `/identities/${user.identityId}`)).body.data.disabledUntil as string;
    await call('PATCH', `/auth-policies/${policyId}`, { primary: { updb: { lockoutDurationMinutes: 1 } } });

    await login(user.username, 'wrong-password');
    const after = (await call('GET', `/identities/${user.identityId}`)).body.data.disabledUntil as string;

    expect(after).toBe(locked);
  });
});

describe('logins that race a delete', () => {
  it('answers 401, never 500, when the authenticator is deleted during the login', async () => {
    const policyId = await createPolicy(authPolicyBody('race-delete', { maxAttempts: 3, lockoutDurationMinutes: 1 }));
    const statuses = new Set<number>();
    for (let round = 0; round < 8; round++) {
      const user = await userUnder(policyId, `race-delete-${round}`);
      const [wrong, right, deleted] = await Promise.all([
        login(user.username, 'wrong-password'),
        login(user.username, user.password),
        call('DELETE', `/authenticators/${user.authenticatorId}`),
      ]);
      statuses.add(wrong.status).add(right.status);
      expect(deleted.status).toBe(200);
    }
    expect([...statuses].every((status) => status === 200 || status === 401)).toBe(true);
  });

  it('leaves no session behind for an identity deleted during its login', async () => {
    for (let round = 0; round < 8; round++) {
      const user = await userUnder('default', `race-session-${round}`);
      const [loggedIn] = await Promise.all([
        login(user.username, user.password),
        call('DELETE', `/identities/${user.identityId}`),
      ]);
      expect([200, 401]).toContain(loggedIn.status);
      const sessions = await call(
        'GET',
        `/api-sessions?filter=${encodeURIComponent(`identityId = "${user.identityId}"`)}`,
      );
      expect(sessions.body.data).toEqual([]);
    }
  });
});

describe('logins that race a disable', () => {
  it('leave no usable session when the identity is disabled after the login read it, even after an enable', async () => {
    const user = await userUnder('default', 'race-disable');
    const { db } = controller().deps.store;
    let armed = true;
    // The disable lands just after the login read the identity (enabled), before the login stores its session.
    db.middlewareStack.add(
      (next, context) => async (args) => {
        const answer = await next(args);
        const readsTheIdentity = JSON.stringify(args.input).includes(`identities#${user.identityId}`);
        if (armed && context.commandName === 'BatchGetItemCommand' && readsTheIdentity) {
          armed = false;
          expect((await call('POST', `/identities/${user.identityId}/disable`, { durationMinutes: 0 })).status).toBe(
            200,
          );
        }
        return answer;
      },
      { step: 'initialize', name: 'disableAfterTheLoginReads' },
    );
    let raced: Awaited<ReturnType<typeof login>>;
    try {
      raced = await login(user.username, user.password);
    } finally {
      armed = false;
      db.middlewareStack.remove('disableAfterTheLoginReads');
    }
    expect([200, 401]).toContain(raced.status);
    expect((await call('POST', `/identities/${user.identityId}/enable`)).status).toBe(200);
    if (raced.status === 200) {
      const used = await controller().call('GET', '/edge/client/v1/current-api-session', {
        token: raced.body.data.token,
      });
      expect(used.status).toBe(401);
    }
    const sessions = await call(
      'GET',
      `/api-sessions?filter=${encodeURIComponent(`identityId = "${user.identityId}"`)}`,
    );
    expect(sessions.body.data).toEqual([]);
    // A login after the enable is a new session, and works.
    const after = await login(user.username, user.password);
    expect(after.status).toBe(200);
    const usedAfter = await controller().call('GET', '/edge/client/v1/current-api-session', {
      token: after.body.data.token,
    });
    expect(usedAfter.status).toBe(200);
  });
});

describe('the default admin', () => {
  it('cannot be disabled, by itself or anyone', async () => {
    const me = await call('GET', '/current-identity');

    const response = await call('POST', `/identities/${me.body.data.id}/disable`, { durationMinutes: 0 });
    const stillIn = await login(ADMIN_USERNAME, ADMIN_PASSWORD);

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('ENTITY_CAN_NOT_BE_UPDATED');
    expect(stillIn.status).toBe(200);
  });
});

describe('lists see what logins change', () => {
  it('finds a locked-out identity by disabled = true, and a reporting one by its new updatedAt', async () => {
    const policyId = await createPolicy(authPolicyBody('lock-listed', { maxAttempts: 1, lockoutDurationMinutes: 5 }));
    const locked = await userUnder(policyId, 'locked-and-listed');
    const reporting = await userUnder('default', 'reporting-and-listed');
    const before = (await call('GET', `/identities/${reporting.identityId}`)).body.data.updatedAt as string;
    await login(locked.username, 'wrong-password');
    await controller().call('POST', '/edge/client/v1/authenticate?method=password', {
      body: { username: reporting.username, password: reporting.password, envInfo: { os: 'linux' } },
    });

    const disabled = await call('GET', `/identities?filter=${encodeURIComponent('disabled = true')}&limit=500`);
    const updated = await call(
      'GET',
      `/identities?filter=${encodeURIComponent(`updatedAt > datetime(${before}) and name = "reporting-and-listed"`)}`,
    );
    const updatedByRange = await call(
      'GET',
      `/identities?filter=${encodeURIComponent(`updatedAt > datetime(${before}) and name contains "reporting-and"`)}`,
    );

    expect(disabled.body.data.map((identity: { id: string }) => identity.id)).toContain(locked.identityId);
    expect(updated.body.data).toHaveLength(1);
    expect(updatedByRange.body.data.map((identity: { id: string }) => identity.id)).toEqual([reporting.identityId]);
  });
});
