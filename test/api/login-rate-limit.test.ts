import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { authPolicyBody, M } from '../support/management-fixtures.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';

const PER_IP = 40;
const PER_USERNAME = 5;
const PER_SOURCE_AND_USERNAME = 3;
const WINDOW_SECONDS = 60;

const { controller, userUnder, createPolicy } = useAdminController({
  loginRateLimit: {
    perIp: PER_IP,
    perUsername: PER_USERNAME,
    perSourceAndUsername: PER_SOURCE_AND_USERNAME,
    windowSeconds: WINDOW_SECONDS,
  },
});

/** A password login from a loopback address of the test's choosing (the server sees it as the source). */
function login(username: string, password: string, sourceAddress = '127.0.0.1') {
  return controller().call('POST', `${M}/authenticate?method=password`, {
    body: { username, password },
    sourceAddress,
  });
}

type Response = Awaited<ReturnType<typeof login>>;

function expectThrottled(response: Response) {
  expect(response.status).toBe(429);
  expect(response.body.error.code).toBe('SERVER_TOO_MANY_REQUESTS');
  expect(response.body.meta).toBeDefined();
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
  expect(response.headers['zt-session']).toBeUndefined();
}

/** Moves the clock to just after a window starts, so a burst cannot straddle two. */
function freshWindow() {
  const now = controller().deps.now().getTime();
  controller().advanceClock(WINDOW_SECONDS * 1000 - (now % (WINDOW_SECONDS * 1000)) + 10);
}

describe('login rate limits', () => {
  it('slows one address guessing one username, and only that address: the right password from another gets in', async () => {
    freshWindow();
    const victim = await userUnder(await createPolicy(authPolicyBody('flooded')), 'victim-user');

    const responses: Response[] = [];
    for (let batch = 0; batch < 4; batch++) {
      responses.push(
        ...(await Promise.all(Array.from({ length: 5 }, () => login(victim.username, 'wrong-password', '127.0.0.2')))),
      );
    }
    expect(responses.every((response) => response.status < 500)).toBe(true);
    // Exactly the (address, username) window's worth reach the password check, however the attempts interleave.
    expect(responses.filter((response) => response.status === 401)).toHaveLength(PER_SOURCE_AND_USERNAME);
    for (const response of responses.filter((r) => r.status !== 401)) expectThrottled(response);

    // The guessing address is refused before the hash, even with the right password; the user elsewhere is not.
    expectThrottled(await login(victim.username, victim.password, '127.0.0.2'));
    expect((await login(victim.username, victim.password, '127.0.0.3')).status).toBe(200);
    expect((await login(ADMIN_USERNAME, ADMIN_PASSWORD, '127.0.0.2')).status).toBe(200);

    // The next window lets the guessing address try again.
    controller().advanceClock(WINDOW_SECONDS * 1000);
    expect((await login(victim.username, victim.password, '127.0.0.2')).status).toBe(200);
  });

  it('when many addresses spend a username’s budget, refuses them but lets the right password in from a clean one', async () => {
    freshWindow();
    const victim = await userUnder(await createPolicy(authPolicyBody('sprayed-from-many')), 'many-sources-victim');
    const attackers = Array.from({ length: 4 }, (_, index) => `127.0.1.${index + 1}`);
    const responses: Response[] = [];
    for (const address of attackers) {
      for (let i = 0; i < PER_SOURCE_AND_USERNAME; i++) responses.push(await login(victim.username, 'wrong', address));
    }
    // The username's budget took PER_USERNAME guesses; past it an address that failed is refused, and each address
    // arriving clean (the third and fourth) gets one guess through the second lane before it has failed too.
    expect(responses.filter((response) => response.status === 401)).toHaveLength(PER_USERNAME + 2);
    for (const response of responses.filter((r) => r.status !== 401)) expectThrottled(response);
    expectThrottled(await login(victim.username, victim.password, attackers[0]!));

    const owner = await login(victim.username, victim.password, '127.0.2.1');
    expect(owner.status, owner.text).toBe(200);

    // The second lane is bounded too: fresh addresses past it are slowed to the next window, not let through.
    const fresh = [];
    for (let index = 0; index < PER_USERNAME; index++)
      fresh.push(await login(victim.username, 'wrong', `127.0.5.${index + 1}`));
    expect(fresh.filter((response) => response.status === 401)).toHaveLength(PER_USERNAME - 3);
    expectThrottled(await login(victim.username, victim.password, '127.0.2.2'));
    controller().advanceClock(WINDOW_SECONDS * 1000);
    expect((await login(victim.username, victim.password, '127.0.2.2')).status).toBe(200);
  });

  it('keeps the default admin reachable from a clean address while it is being guessed from everywhere', async () => {
    freshWindow();
    for (let index = 0; index < PER_USERNAME + 2; index++) {
      await login(ADMIN_USERNAME, 'not-the-password', `127.0.3.${index + 1}`);
    }
    const admin = await login(ADMIN_USERNAME, ADMIN_PASSWORD, '127.0.4.1');
    expect(admin.status, admin.text).toBe(200);
  });

  it('refuses malformed credentials with 400 without counting them', async () => {
    for (let i = 0; i < PER_USERNAME + 2; i++) {
      const response = await login('abc', 'short');
      expect(response.status).toBe(400);
    }
  });

  it('limits a source address across usernames and methods, until the window ends', async () => {
    const now = controller().deps.now().getTime();
    controller().advanceClock(WINDOW_SECONDS * 1000 - (now % (WINDOW_SECONDS * 1000)) + 10);
    const responses: Response[] = [];
    for (let i = 0; i < PER_IP + 5; i++) responses.push(await login(`sprayed-user-${i}`, 'some-password'));
    expect(responses.filter((response) => response.status === 401)).toHaveLength(PER_IP);
    for (const response of responses.slice(PER_IP)) expectThrottled(response);

    expectThrottled(await login(ADMIN_USERNAME, ADMIN_PASSWORD));
    expectThrottled(await controller().call('POST', `${M}/authenticate?method=ext-jwt`, { body: {} }));
    expectThrottled(await controller().call('POST', '/edge/client/v1/authenticate?method=cert', { body: {} }));

    controller().advanceClock(WINDOW_SECONDS * 1000);
    expect((await login(ADMIN_USERNAME, ADMIN_PASSWORD)).status).toBe(200);
  });
});

describe('login rate limit settings', () => {
  it('default to generous limits and read the environment', () => {
    expect(loadConfig({}).loginRateLimit).toEqual({
      perIp: 600,
      perUsername: 60,
      perSourceAndUsername: 10,
      windowSeconds: 60,
    });
    expect(
      loadConfig({
        LOGIN_RATE_LIMIT_PER_IP: '0',
        LOGIN_RATE_LIMIT_PER_USERNAME: '3',
        LOGIN_RATE_LIMIT_PER_SOURCE_AND_USERNAME: '2',
        LOGIN_RATE_LIMIT_WINDOW_SECONDS: '10',
      }).loginRateLimit,
    ).toEqual({ perIp: 0, perUsername: 3, perSourceAndUsername: 2, windowSeconds: 10 });
    expect(() => loadConfig({ LOGIN_RATE_LIMIT_WINDOW_SECONDS: '0' })).toThrow(/LOGIN_RATE_LIMIT_WINDOW_SECONDS/);
    expect(() => loadConfig({ LOGIN_RATE_LIMIT_PER_IP: '-1' })).toThrow(/LOGIN_RATE_LIMIT_PER_IP/);
  });
});

describe('enrollment rate limits', () => {
  it('throttles enrollment attempts per source address like logins, before any token is looked up', async () => {
    const now = controller().deps.now().getTime();
    controller().advanceClock(WINDOW_SECONDS * 1000 - (now % (WINDOW_SECONDS * 1000)) + 10);
    const enroll = () =>
      controller().call('POST', '/edge/client/v1/enroll/ott', {
        body: { token: '00000000-0000-4000-8000-000000000000', clientCsr: 'not a csr' },
      });
    const responses: Response[] = [];
    for (let i = 0; i < PER_IP + 2; i++) responses.push(await enroll());
    expect(responses.every((response) => response.status < 500)).toBe(true);
    expect(responses.slice(0, PER_IP).every((response) => response.status === 400)).toBe(true);
    for (const response of responses.slice(PER_IP)) expectThrottled(response);
  });
});
