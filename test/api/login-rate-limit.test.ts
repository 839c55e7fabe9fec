import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { authPolicyBody, M } from '../support/management-fixtures.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';

const PER_IP = 40;
const PER_USERNAME = 5;
const WINDOW_SECONDS = 60;

const { controller, login, userUnder, createPolicy } = useAdminController({
  loginRateLimit: { perIp: PER_IP, perUsername: PER_USERNAME, windowSeconds: WINDOW_SECONDS },
});

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

describe('login rate limits', () => {
  it('shrugs off a flood of one username with 429s and Retry-After, no 5xx, and the admin still logs in', async () => {
    // A fresh window, so the flood cannot straddle two.
    const now = controller().deps.now().getTime();
    controller().advanceClock(WINDOW_SECONDS * 1000 - (now % (WINDOW_SECONDS * 1000)) + 10);
    const victim = await userUnder(await createPolicy(authPolicyBody('flooded')), 'victim-user');

    const responses: Response[] = [];
    for (let batch = 0; batch < 4; batch++) {
      responses.push(...(await Promise.all(Array.from({ length: 5 }, () => login(victim.username, 'wrong-password')))));
    }
    expect(responses.every((response) => response.status < 500)).toBe(true);
    // Exactly the window's worth reach the password check, however the attempts interleave.
    expect(responses.filter((response) => response.status === 401)).toHaveLength(PER_USERNAME);
    for (const response of responses.filter((r) => r.status !== 401)) expectThrottled(response);

    // The right password does not get past the limit either: it is refused before the hash is computed.
    expectThrottled(await login(victim.username, victim.password));

    const admin = await login(ADMIN_USERNAME, ADMIN_PASSWORD);
    expect(admin.status).toBe(200);

    // The next window lets the user in again.
    controller().advanceClock(WINDOW_SECONDS * 1000);
    expect((await login(victim.username, victim.password)).status).toBe(200);
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
    expect(loadConfig({}).loginRateLimit).toEqual({ perIp: 600, perUsername: 60, windowSeconds: 60 });
    expect(
      loadConfig({
        LOGIN_RATE_LIMIT_PER_IP: '0',
        LOGIN_RATE_LIMIT_PER_USERNAME: '3',
        LOGIN_RATE_LIMIT_WINDOW_SECONDS: '10',
      }).loginRateLimit,
    ).toEqual({ perIp: 0, perUsername: 3, windowSeconds: 10 });
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
