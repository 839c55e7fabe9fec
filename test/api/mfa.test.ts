import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '#shared/config.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { recordSent, type SentCommand } from '../support/dynamodb-recorder.ts';
import type { HttpResponse } from '../support/https-client.ts';
import { authPolicyBody, M } from '../support/management-fixtures.ts';

const { controller, call, createPolicy, userUnder, login } = useAdminController();
const C = '/edge/client/v1';

let users = 0;
const unique = (name: string) => `${name}-${++users}-${Date.now().toString(36)}`;

/** A client call with a session token (client API unless a management path is given). */
const as = (
  token: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
) => controller().call(method, path.startsWith('/edge/') ? path : `${C}${path}`, { token, ...options });

const secretOf = (provisioningUrl: string) => new URL(provisioningUrl).searchParams.get('secret')!;

/** The TOTP code of `secret` at the controller's clock, `steps` periods from now. */
function codeAt(secret: string, steps = 0): Promise<string> {
  const epoch = Math.floor(controller().deps.now().getTime() / 1000) + steps * 30;
  return generate({ secret, epoch });
}

/** Moves the controller's clock to the next 30-second step, so a new code is due (codes work once). */
function nextStep(): void {
  controller().advanceClock(30_000);
}

async function userLogin(password = 'Mfa-Passw0rd!') {
  const policyId = await createPolicy(authPolicyBody(unique('mfa-policy')));
  const user = await userUnder(policyId, unique('mfa-user'), password);
  const response = await login(user.username, user.password);
  expect(response.status, response.text).toBe(200);
  return { ...user, policyId, token: response.body.data.token as string };
}

/** Enrolls and verifies TOTP for a logged-in user; answers its secret and the first recovery codes. */
async function enrolled(token: string) {
  expect((await as(token, 'POST', '/current-identity/mfa')).status).toBe(201);
  const detail = await as(token, 'GET', '/current-identity/mfa');
  const secret = secretOf(detail.body.data.provisioningUrl);
  const verified = await as(token, 'POST', '/current-identity/mfa/verify', { body: { code: await codeAt(secret) } });
  expect(verified.status, verified.text).toBe(200);
  nextStep();
  return { secret, recoveryCodes: detail.body.data.recoveryCodes as string[] };
}

const status = (response: HttpResponse) => response.status;

/** A password login from a loopback address of the test's choosing (the server sees it as the source). */
async function loginFrom(user: { username: string; password: string }, address: string): Promise<string> {
  const response = await controller().call('POST', `${M}/authenticate?method=password`, {
    body: { username: user.username, password: user.password },
    sourceAddress: address,
  });
  expect(response.status, response.text).toBe(200);
  return response.body.data.token as string;
}

/** An MFA code given on a (partial) session from `address`. */
const codeFrom = (token: string, code: string, address: string) =>
  controller().call('POST', `${C}/authenticate/mfa`, { token, body: { code }, sourceAddress: address });

function expectThrottled(response: HttpResponse) {
  expect(response.status, response.text).toBe(429);
  expect(response.body.error.code).toBe('SERVER_TOO_MANY_REQUESTS');
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
}

/**
 * Moves the clock to a window's start: MFA attempts count in fixed windows of MFA_RATE_LIMIT_WINDOW_SECONDS (600), so
 * no window ends in the middle of a test (one did once, at 00:50 on the clock).
 */
function startOfMfaWindow(): void {
  controller().advanceClock(600_000 - (controller().deps.now().getTime() % 600_000));
}

describe('TOTP enrollment', () => {
  it('enrolls from the provisioning URL, shows a QR code, and verifies with a code from the app', async () => {
    const user = await userLogin();
    const before = await as(user.token, 'GET', '/current-identity/mfa');
    expect(before.status).toBe(404);
    expect(before.body.error.code).toBe('NOT_FOUND');

    const started = await as(user.token, 'POST', '/current-identity/mfa');
    expect(started.status, started.text).toBe(201);
    expectMatchesSpec('client', 'POST', '/current-identity/mfa', 201, started.body);
    expect(status(await as(user.token, 'POST', '/current-identity/mfa'))).toBe(409);

    const detail = await as(user.token, 'GET', '/current-identity/mfa');
    expectMatchesSpec('client', 'GET', '/current-identity/mfa', 200, detail.body);
    expect(detail.body.data.isVerified).toBe(false);
    expect(detail.body.data.provisioningUrl).toMatch(/^otpauth:\/\/totp\/openziti\.io:mfa-user-/);
    expect(detail.body.data.recoveryCodes).toHaveLength(20);
    for (const code of detail.body.data.recoveryCodes) expect(code).toMatch(/^[A-Z2-7]{6}$/);

    const qr = await as(user.token, 'GET', '/current-identity/mfa/qr-code');
    expect(qr.status).toBe(200);
    expect(qr.headers['content-type']).toBe('image/png');
    const png = Buffer.from(qr.raw);
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    // IHDR: a square of about 256 pixels (whole modules, so a pixel or two either way).
    expect(png.readUInt32BE(16)).toBe(png.readUInt32BE(20));
    expect(Math.abs(png.readUInt32BE(16) - 256)).toBeLessThan(8);

    const secret = secretOf(detail.body.data.provisioningUrl);
    const wrong = await as(user.token, 'POST', '/current-identity/mfa/verify', { body: { code: '000000' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('MFA_INVALID_TOKEN');
    const missing = await as(user.token, 'POST', '/current-identity/mfa/verify', { body: {} });
    expect(missing.body.error.code).toBe('COULD_NOT_VALIDATE');
    const recoveryRefused = await as(user.token, 'POST', '/current-identity/mfa/verify', {
      body: { code: detail.body.data.recoveryCodes[0] },
    });
    expect(recoveryRefused.body.error.code).toBe('MFA_INVALID_TOKEN');

    const verified = await as(user.token, 'POST', '/current-identity/mfa/verify', {
      body: { code: await codeAt(secret) },
    });
    expect(verified.status, verified.text).toBe(200);
    const after = await as(user.token, 'GET', '/current-identity/mfa');
    expect(after.body.data).toMatchObject({ isVerified: true });
    expect(after.body.data.provisioningUrl).toBeUndefined();
    expect(after.body.data.recoveryCodes).toBeUndefined();
    expect(status(await as(user.token, 'GET', '/current-identity/mfa/qr-code'))).toBe(404);
    const identity = await call('GET', `/identities/${user.identityId}`);
    expect(identity.body.data.isMfaEnabled).toBe(true);
  });

  it('completes the MFA of the session that verified the enrollment, as a login with a code would', async () => {
    const user = await userLogin();
    const before = await as(user.token, 'GET', '/current-api-session');
    expect(before.body.data).toMatchObject({ isMfaRequired: false, isMfaComplete: false });

    await enrolled(user.token);
    const after = await as(user.token, 'GET', '/current-api-session');
    expect(after.status, after.text).toBe(200);
    expect(after.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: true, authQueries: [] });
    const listed = await call('GET', `/api-sessions/${after.body.data.id}`);
    expect(listed.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: true });
  });

  it('stores the seed and recovery codes only sealed', async () => {
    const user = await userLogin();
    const { secret, recoveryCodes } = await enrolled(user.token);
    const stored = await controller().deps.store.get((await import('#shared/entities/mfa.ts')).mfas, user.identityId);
    const item = JSON.stringify(stored);
    expect(item).not.toContain(secret);
    for (const code of recoveryCodes) expect(item).not.toContain(code);
  });
});

describe('logging in with MFA', () => {
  it('makes every login partial until a code is given, and a code works once', async () => {
    const user = await userLogin();
    const { secret } = await enrolled(user.token);

    const second = await login(user.username, user.password);
    const token = second.body.data.token as string;
    expect(second.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: false });
    expect(second.body.data.authQueries).toEqual([
      expect.objectContaining({ typeId: 'MFA', provider: 'ziti', httpUrl: './authenticate/mfa', isTotpEnrolled: true }),
    ]);
    expect(status(await as(token, 'GET', '/current-identity'))).toBe(401);
    expect(status(await as(token, 'GET', '/services'))).toBe(401);
    const current = await as(token, 'GET', '/current-api-session');
    expect(current.status).toBe(200);
    expect(current.body.data.authQueries[0].typeId).toBe('MFA');

    const code = await codeAt(secret);
    const passed = await as(token, 'POST', '/authenticate/mfa', { body: { code } });
    expect(passed.status, passed.text).toBe(200);
    expectMatchesSpec('client', 'POST', '/authenticate/mfa', 200, passed.body);
    expect(status(await as(token, 'GET', '/current-identity'))).toBe(200);
    const complete = await as(token, 'GET', '/current-api-session');
    expect(complete.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: true, authQueries: [] });

    // The same code on another login is a replay.
    const third = (await login(user.username, user.password)).body.data.token as string;
    const replay = await as(third, 'POST', '/authenticate/mfa', { body: { code } });
    expect(replay.status).toBe(401);
    expect(replay.body.error.code).toBe('MFA_INVALID_TOKEN');
    nextStep();
    expect(status(await as(third, 'POST', '/authenticate/mfa', { body: { code: await codeAt(secret) } }))).toBe(200);
  });

  it('takes a recovery code once', async () => {
    const user = await userLogin();
    const { recoveryCodes } = await enrolled(user.token);
    const token = (await login(user.username, user.password)).body.data.token as string;
    expect(status(await as(token, 'POST', '/authenticate/mfa', { body: { code: recoveryCodes[3] } }))).toBe(200);
    const again = (await login(user.username, user.password)).body.data.token as string;
    expect(status(await as(again, 'POST', '/authenticate/mfa', { body: { code: recoveryCodes[3] } }))).toBe(401);
    expect(status(await as(again, 'POST', '/authenticate/mfa', { body: { code: recoveryCodes[4] } }))).toBe(200);
  });

  it('counts wrong codes towards the auth policy lockout', async () => {
    const policyId = await createPolicy(
      authPolicyBody(unique('mfa-lockout'), { maxAttempts: 3, lockoutDurationMinutes: 5 }),
    );
    const user = await userUnder(policyId, unique('mfa-locked'), 'Mfa-Passw0rd!');
    const first = (await login(user.username, user.password)).body.data.token as string;
    await enrolled(first);
    const token = (await login(user.username, user.password)).body.data.token as string;
    for (let i = 0; i < 3; i++) {
      const wrong = await as(token, 'POST', '/authenticate/mfa', { body: { code: '123456' } });
      expect([401]).toContain(wrong.status);
    }
    const identity = await call('GET', `/identities/${user.identityId}`);
    expect(identity.body.data.disabled).toBe(true);
    expect(status(await login(user.username, user.password))).toBe(401);
  });

  it('ends a partial session after five wrong codes, so each run of guesses costs a new login', async () => {
    const user = await userLogin();
    const { secret } = await enrolled(user.token);
    const token = (await login(user.username, user.password)).body.data.token as string;
    const refusals = [];
    for (let i = 0; i < 5; i++) {
      refusals.push(await as(token, 'POST', '/authenticate/mfa', { body: { code: '000000' } }));
    }
    expect(refusals.slice(0, 4).map((response) => response.body.error.code)).toEqual(
      Array(4).fill('MFA_INVALID_TOKEN'),
    );
    expect(refusals[4]!.status).toBe(401);
    expect(refusals[4]!.body.error.code).toBe('UNAUTHORIZED');
    const late = await as(token, 'POST', '/authenticate/mfa', { body: { code: await codeAt(secret) } });
    expect(late.status).toBe(401);
    expect(late.body.error.code).toBe('UNAUTHORIZED');
  });

  it('bounds wrong codes per identity across addresses; past that ceiling the owner gets in from a remembered address, a new one next window', async () => {
    startOfMfaWindow();
    const user = await userLogin();
    // Enrolled from 127.0.0.1: the identity passed MFA there, so that address is remembered.
    const { secret } = await enrolled(user.token);

    // Two guessing addresses spend the identity's ceiling (MFA_RATE_LIMIT_PER_IDENTITY, 10) at 5 codes each.
    const guesses = [];
    for (const address of ['127.0.6.1', '127.0.6.2']) {
      const token = await loginFrom(user, address);
      for (let i = 0; i < 5; i++) guesses.push(await codeFrom(token, '000000', address));
    }
    expect(guesses.map((response) => response.status)).toEqual(Array(10).fill(401));
    // Each address is refused past its own 5, before the code is looked at.
    expectThrottled(await codeFrom(await loginFrom(user, '127.0.6.1'), await codeAt(secret), '127.0.6.1'));

    // The ceiling is spent: a new address waits for the next window, the remembered one does not.
    const newAddress = await loginFrom(user, '127.0.6.3');
    expectThrottled(await codeFrom(newAddress, await codeAt(secret), '127.0.6.3'));
    const remembered = await codeFrom(await loginFrom(user, '127.0.0.1'), await codeAt(secret), '127.0.0.1');
    expect(remembered.status, remembered.text).toBe(200);

    controller().advanceClock(600_000);
    const nextWindow = await codeFrom(newAddress, await codeAt(secret), '127.0.6.3');
    expect(nextWindow.status, nextWindow.text).toBe(200);
  });

  it('reads the remembered address only where it counts: not for a wrong code under the ceiling, once for a right one', async () => {
    startOfMfaWindow();
    const user = await userLogin();
    const { secret } = await enrolled(user.token);
    const token = await loginFrom(user, '127.0.6.9');
    const rememberedReads = (sent: SentCommand[]) =>
      sent
        .filter((command) => JSON.stringify(command.input).includes('"REMEMBERED#'))
        .map((command) => command.command);

    const wrong = await recordSent(controller().deps.store.db, () => codeFrom(token, '000000', '127.0.6.9'));
    expect(rememberedReads(wrong)).toEqual([]);
    // A right code refreshes its address (a new one here: read, then remembered).
    const right = await recordSent(controller().deps.store.db, async () => {
      const passed = await codeFrom(token, await codeAt(secret), '127.0.6.9');
      expect(passed.status, passed.text).toBe(200);
    });
    expect(rememberedReads(right)).toEqual(['GetItemCommand', 'TransactWriteItemsCommand']);
  });

  it('never refuses a right code for the owner’s earlier ones: twelve MFA logins in one window all get in', async () => {
    startOfMfaWindow();
    const user = await userLogin();
    const { secret } = await enrolled(user.token);
    const passed = [];
    for (let i = 0; i < 12; i++) {
      const token = (await login(user.username, user.password)).body.data.token as string;
      passed.push((await as(token, 'POST', '/authenticate/mfa', { body: { code: await codeAt(secret) } })).status);
      nextStep();
    }
    expect(passed).toEqual(Array(12).fill(200));
  });

  it('does not let wrong codes from one address stop the right code from another', async () => {
    startOfMfaWindow();
    const user = await userLogin();
    const { secret } = await enrolled(user.token);
    const guesser = '127.0.7.1';
    const guesses = [];
    for (const count of [5, 5]) {
      const token = await loginFrom(user, guesser);
      for (let i = 0; i < count; i++) guesses.push(await codeFrom(token, '000000', guesser));
    }
    // Five reach the check (the fifth ends its session), the rest are refused before it.
    expect(guesses.map((response) => response.status)).toEqual([...Array(5).fill(401), ...Array(5).fill(429)]);

    // An address the identity never passed MFA from: only the auth policy's lockout (none here) could stop it.
    const elsewhere = '127.0.7.2';
    const owner = await codeFrom(await loginFrom(user, elsewhere), await codeAt(secret), elsewhere);
    expect(owner.status, owner.text).toBe(200);
  });

  it('asks a policy requiring TOTP to enroll first, then to give codes', async () => {
    const policyId = await createPolicy(authPolicyBody(unique('mfa-required'), {}, { requireTotp: true }));
    const user = await userUnder(policyId, unique('mfa-must'), 'Mfa-Passw0rd!');
    const response = await login(user.username, user.password);
    const token = response.body.data.token as string;
    expect(response.body.data.authQueries).toEqual([expect.objectContaining({ typeId: 'MFA', isTotpEnrolled: false })]);
    expect(status(await as(token, 'POST', '/authenticate/mfa', { body: { code: '123456' } }))).toBe(409);
    // A partial session may enroll; verifying completes it.
    const { secret } = await enrolled(token);
    expect(status(await as(token, 'GET', '/current-identity'))).toBe(200);
    const next = await login(user.username, user.password);
    expect(next.body.data.authQueries).toEqual([expect.objectContaining({ typeId: 'MFA', isTotpEnrolled: true })]);
    const nextToken = next.body.data.token as string;
    expect(status(await as(nextToken, 'POST', '/authenticate/mfa', { body: { code: await codeAt(secret) } }))).toBe(
      200,
    );
  });
});

describe('recovery codes, removal and the TOTP token', () => {
  it('shows and regenerates recovery codes for a current code, and removes MFA with one', async () => {
    const user = await userLogin();
    const { secret, recoveryCodes } = await enrolled(user.token);

    const noCode = await as(user.token, 'GET', '/current-identity/mfa/recovery-codes');
    expect(noCode.status).toBe(401);
    const shown = await as(user.token, 'GET', '/current-identity/mfa/recovery-codes', {
      headers: { 'mfa-validation-code': await codeAt(secret) },
    });
    expect(shown.status, shown.text).toBe(200);
    expectMatchesSpec('client', 'GET', '/current-identity/mfa/recovery-codes', 200, shown.body);
    expect(shown.body.data.recoveryCodes).toEqual(recoveryCodes);
    nextStep();

    const renewed = await as(user.token, 'POST', '/current-identity/mfa/recovery-codes', {
      body: { code: await codeAt(secret) },
    });
    expect(renewed.status, renewed.text).toBe(200);
    nextStep();
    const fresh = await as(user.token, 'GET', '/current-identity/mfa/recovery-codes', {
      body: { code: await codeAt(secret) },
    });
    expect(fresh.body.data.recoveryCodes).toHaveLength(20);
    expect(fresh.body.data.recoveryCodes).not.toEqual(recoveryCodes);
    nextStep();

    const noHeader = await as(user.token, 'DELETE', '/current-identity/mfa');
    expect(noHeader.status).toBe(401);
    const removed = await as(user.token, 'DELETE', '/current-identity/mfa', {
      headers: { 'mfa-validation-code': fresh.body.data.recoveryCodes[0] },
    });
    expect(removed.status, removed.text).toBe(200);
    const before = await as(user.token, 'GET', '/current-identity/mfa');
    expect(before.status).toBe(404);
    expect(before.body.error.code).toBe('NOT_FOUND');
    const plain = await login(user.username, user.password);
    expect(plain.body.data).toMatchObject({ isMfaRequired: false, authQueries: [] });
  });

  it('lets an admin reset a lost device, on both APIs', async () => {
    const user = await userLogin();
    await enrolled(user.token);
    const reset = await call('DELETE', `/identities/${user.identityId}/mfa`);
    expect(reset.status, reset.text).toBe(200);
    expectMatchesSpec('management', 'DELETE', '/identities/{id}/mfa', 200, reset.body);
    expect(status(await call('DELETE', `/identities/${user.identityId}/mfa`))).toBe(404);
    expect(status(await call('DELETE', `/identities/not-an-identity/mfa`))).toBe(404);
    const fresh = await login(user.username, user.password);
    expect(fresh.body.data.isMfaRequired).toBe(false);
    // The user may enroll again, here on the management API.
    const again = await as(fresh.body.data.token, 'POST', `${M}/current-identity/mfa`);
    expect(again.status).toBe(201);
    expect(status(await call('DELETE', `/identities/${user.identityId}/mfa`, undefined, fresh.body.data.token))).toBe(
      401,
    );
  });

  it('answers a TOTP token for a current code, and the MFA posture check passes', async () => {
    const user = await userLogin();
    const { secret } = await enrolled(user.token);
    const created = await as(user.token, 'POST', '/current-api-session/totp-token', {
      body: { code: await codeAt(secret) },
    });
    expect(created.status, created.text).toBe(200);
    expectMatchesSpec('client', 'POST', '/current-api-session/totp-token', 200, created.body);
    const posture = await call('GET', `/identities/${user.identityId}/posture-data`);
    const sessionId = (await as(user.token, 'GET', '/current-api-session')).body.data.id as string;
    expect(posture.body.data.apiSessionPostureData[sessionId].mfa.passedMfa).toBe(true);
  });
});

describe('MFA rate limit settings', () => {
  it('default to 5 codes per address and 10 per identity in 600 s, and read the environment', () => {
    expect(loadConfig({}).mfaRateLimit).toEqual({ perIdentity: 10, perSourceAndIdentity: 5, windowSeconds: 600 });
    expect(
      loadConfig({
        MFA_RATE_LIMIT_PER_IDENTITY: '30',
        MFA_RATE_LIMIT_PER_SOURCE_AND_IDENTITY: '0',
        MFA_RATE_LIMIT_WINDOW_SECONDS: '60',
      }).mfaRateLimit,
    ).toEqual({ perIdentity: 30, perSourceAndIdentity: 0, windowSeconds: 60 });
    expect(() => loadConfig({ MFA_RATE_LIMIT_PER_SOURCE_AND_IDENTITY: '-1' })).toThrow(
      /MFA_RATE_LIMIT_PER_SOURCE_AND_IDENTITY/,
    );
  });
});
