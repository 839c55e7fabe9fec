import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { useAdminController } from '../support/admin-controller.ts';
import type { HttpResponse } from '../support/https-client.ts';
import { authPolicyBody, M } from '../support/management-fixtures.ts';
import { ADMIN_PASSWORD, ADMIN_USERNAME } from '../support/test-controller.ts';

/**
 * The login lanes under attack: 12 addresses sending 10 wrong passwords each a minute (the deployed per-address
 * limit), 120 a minute, twice what the username's budget and its second lane together take here (20 each, so the
 * test pays for few password hashes): attempts from elsewhere never keep the owner out of their own machine, and never
 * out for longer than a window.
 */
const LIMITS = { ...loadConfig({}).loginRateLimit, perUsername: 20 };
const WINDOW_MS = LIMITS.windowSeconds * 1000;
const DAY_MS = 86_400_000;
const ATTACKERS = 12;
const { controller, userUnder, createPolicy } = useAdminController({ loginRateLimit: LIMITS });

/** A password login from a loopback address of the test's choosing (the server sees it as the source). */
function login(username: string, password: string, sourceAddress: string) {
  return controller().call('POST', `${M}/authenticate?method=password`, {
    body: { username, password },
    sourceAddress,
  });
}

/** Moves the clock to just after a window starts, so a burst cannot straddle two. */
function freshWindow() {
  const now = controller().deps.now().getTime();
  controller().advanceClock(WINDOW_MS - (now % WINDOW_MS) + 10);
}

/** Each address in turn sends its window's worth of wrong passwords for `username` at once (tries are simultaneous). */
async function flood(username: string, addresses: readonly string[]): Promise<HttpResponse[]> {
  const responses: HttpResponse[] = [];
  for (const address of addresses) {
    const burst = Array.from({ length: LIMITS.perSourceAndUsername }, () =>
      login(username, 'not-the-password', address),
    );
    responses.push(...(await Promise.all(burst)));
  }
  expect(responses.every((response) => response.status === 401 || response.status === 429)).toBe(true);
  return responses;
}

const checked = (responses: readonly HttpResponse[]) => responses.filter((response) => response.status === 401);
const addressesOf = (block: number, count: number) =>
  Array.from({ length: count }, (_, i) => `127.0.${block}.${i + 1}`);

describe('logins that nobody can lock for someone else', () => {
  it('keeps the default admin’s remembered address in while 12 addresses send 120 wrong passwords a minute, and lets a new address in after the window', async () => {
    // The admin logged in from 127.0.0.1 when the file started: that address is remembered for its username.
    freshWindow();
    const attack = await flood(ADMIN_USERNAME, addressesOf(8, ATTACKERS));
    expect(attack).toHaveLength(120);
    // The username's budget, and at most each attacking address's first try through the second lane.
    expect(checked(attack).length).toBeGreaterThanOrEqual(LIMITS.perUsername);
    expect(checked(attack).length).toBeLessThanOrEqual(LIMITS.perUsername + ATTACKERS);

    // The owner mistypes once, then logs in twice: none of these is the address's first try that could take the
    // second lane; only the remembered address lets them through.
    expect((await login(ADMIN_USERNAME, 'mistyped-password', '127.0.0.1')).status).toBe(401);
    for (let i = 0; i < 2; i++) {
      const remembered = await login(ADMIN_USERNAME, ADMIN_PASSWORD, '127.0.0.1');
      expect(remembered.status, remembered.text).toBe(200);
    }

    // The attack goes on into the next window; an address the admin never used gets in all the same.
    controller().advanceClock(WINDOW_MS);
    await flood(ADMIN_USERNAME, addressesOf(8, ATTACKERS));
    const newAddress = await login(ADMIN_USERNAME, ADMIN_PASSWORD, '127.0.9.1');
    expect(newAddress.status, newAddress.text).toBe(200);
  }, 120_000);

  it('lets one of ten simultaneous wrong tries from a fresh address through the second lane, not all ten', async () => {
    const victim = await userUnder(await createPolicy(authPolicyBody('lanes-victim')), 'lanes-victim');
    freshWindow();
    // More than the username's budget from elsewhere: the first lane is full.
    await flood(victim.username, addressesOf(10, 3));

    const burst = await Promise.all(
      Array.from({ length: 10 }, () => login(victim.username, 'not-the-password', '127.0.11.1')),
    );
    expect(burst.map((response) => response.status).sort()).toEqual([401, ...Array(9).fill(429)]);
  });

  it('remembers an address for 30 days after its last login, and a login within them renews that', async () => {
    const owner = await userUnder(await createPolicy(authPolicyBody('lanes-owner')), 'lanes-owner');
    const home = '127.0.12.1';
    expect((await login(owner.username, owner.password, home)).status).toBe(200);

    /** From `home` while the username's budget is spent: a mistyped try (so the next is not its first), then right. */
    const homeDuringFlood = async (days: number) => {
      controller().advanceClock(days * DAY_MS);
      freshWindow();
      await flood(owner.username, addressesOf(13, 2));
      expect((await login(owner.username, 'mistyped-password', home)).status).toBe(401);
      return (await login(owner.username, owner.password, home)).status;
    };
    expect(await homeDuringFlood(29)).toBe(200);
    // 58 days after the first login, 29 after the last.
    expect(await homeDuringFlood(29)).toBe(200);
    expect(await homeDuringFlood(31)).toBe(429);
  }, 120_000);
});
