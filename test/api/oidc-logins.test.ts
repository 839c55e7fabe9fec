import { importPKCS8, SignJWT } from 'jose';
import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { createServerCertificate } from '#local/tls-certificate.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { enrolledDevice } from '../support/enrolled-device.ts';
import type { HttpResponse } from '../support/https-client.ts';
import { authPolicyBody } from '../support/management-fixtures.ts';
import {
  authorize,
  authQueries,
  claimsOf,
  codeAfterLogin,
  exchangeCode,
  form,
  jsonLogin,
  passwordLogin,
  secondFactorStep,
} from '../support/oidc-client.ts';

const { controller, call, createdId, createPolicy, userUnder, login } = useAdminController();
const C = '/edge/client/v1';
const MINUTE = 60_000;

let names = 0;
const unique = (name: string) => `${name}-${++names}-${Date.now().toString(36)}`;

/** The TOTP code of `secret` at the controller's clock. */
function codeNow(secret: string): Promise<string> {
  return generate({ secret, epoch: Math.floor(controller().deps.now().getTime() / 1000) });
}

/** Moves the clock to the next 30-second step: a code is good once, so the next one must be due. */
const nextStep = () => controller().advanceClock(30_000);

/** Moves the clock to the start of an MFA throttle window (600 s), so no test's attempts straddle two. */
function freshMfaWindow(): void {
  const now = controller().deps.now().getTime();
  controller().advanceClock(600_000 - (now % 600_000) + 10);
}

const secretOf = (provisioningUrl: string) => new URL(provisioningUrl).searchParams.get('secret')!;

/** A user under a policy of its own (`secondary` of the policy as given) with a password login. */
async function user(name: string, updb: Record<string, unknown> = {}, secondary: Record<string, unknown> = {}) {
  const policyId = await createPolicy(authPolicyBody(unique(`${name}-policy`), updb, secondary));
  return { ...(await userUnder(policyId, unique(name))), policyId };
}

/** A user with TOTP enrolled and verified through the legacy API: its secret and recovery codes. */
async function userWithTotp(name: string) {
  const created = await user(name);
  const token = (await login(created.username, created.password)).body.data.token as string;
  const as = (method: string, path: string, body?: unknown) =>
    controller().call(method, `${C}${path}`, { token, ...(body ? { body } : {}) });
  expect((await as('POST', '/current-identity/mfa')).status).toBe(201);
  const detail = (await as('GET', '/current-identity/mfa')).body.data;
  const secret = secretOf(detail.provisioningUrl);
  expect((await as('POST', '/current-identity/mfa/verify', { code: await codeNow(secret) })).status).toBe(200);
  nextStep();
  return { ...created, secret, recoveryCodes: detail.recoveryCodes as string[] };
}

/**
 * An external JWT signer keyed by a certificate (no key set to fetch), with extra fields (`externalAuthUrl`, ...), and
 * tokens of it for a subject, valid on the controller's clock (which tests move on).
 */
async function certSigner(name: string, extra: Record<string, unknown> = {}) {
  const material = await createServerCertificate([`${name}.example.test`]);
  const kid = unique(`${name}-kid`);
  const issuer = `https://idp.example.test/${unique(name)}`;
  const id = await createdId('/external-jwt-signers', {
    name: unique(name),
    enabled: true,
    issuer,
    audience: 'ziti-controller',
    certPem: material.cert,
    kid,
    ...extra,
  });
  const key = await importPKCS8(material.key, 'ES256');
  const jwtFor = (sub: string) =>
    new SignJWT({ sub })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer(issuer)
      .setAudience('ziti-controller')
      .setExpirationTime(Math.floor(controller().deps.now().getTime() / 1000) + 300)
      .sign(key);
  return { id, jwtFor };
}

/** The reference's TOTP auth query of the OIDC provider. */
const totpQuery = (isTotpEnrolled: boolean) => ({
  typeId: 'TOTP',
  provider: 'ziti',
  format: 'numeric',
  httpMethod: 'POST',
  httpUrl: './oidc/login/totp',
  minLength: 6,
  maxLength: 8,
  isTotpEnrolled,
});

const callbackOf = (authRequestId: string) => `${controller().origin}/oidc/authorize/callback?id=${authRequestId}`;

function expectOwesTotp(response: HttpResponse, isTotpEnrolled: boolean) {
  expect(response.status, response.text).toBe(200);
  expect(response.headers['totp-required']).toBe('true');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.body).toEqual({ authQueries: [totpQuery(isTotpEnrolled)] });
}

function expectToCallback(response: HttpResponse, authRequestId: string) {
  expect(response.status, response.text).toBe(302);
  expect(response.headers.location).toBe(callbackOf(authRequestId));
}

/** The legacy login's 401 envelope. */
function expectRefused(response: HttpResponse, code = 'INVALID_AUTH') {
  expect(response.status, response.text).toBe(401);
  expect(response.body).toEqual({
    error: expect.objectContaining({ code, message: expect.any(String), requestId: expect.any(String) }),
    meta: expect.any(Object),
  });
  expect(response.headers.location).toBeUndefined();
}

function expectWrongCode(response: HttpResponse) {
  expect(response.status, response.text).toBe(400);
  expect(response.body.error).toMatchObject({ code: 'INVALID TOTP CODE', message: expect.any(String) });
}

describe('OIDC logins: a TOTP second factor', () => {
  it('answers a login that owes a code with its auth queries, then gives the code and a 302 to the callback', async () => {
    const someone = await userWithTotp('oidc-totp');
    const { authRequestId, verifier } = await authorize(controller());

    const before = await authQueries(controller(), authRequestId);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ authQueries: [] });
    const loggedIn = await passwordLogin(controller(), authRequestId, someone.username, someone.password);
    expectOwesTotp(loggedIn, true);
    expectOwesTotp(await authQueries(controller(), authRequestId), true);
    expect((await controller().call('GET', `/oidc/authorize/callback?id=${authRequestId}`)).status).toBe(400);

    const passed = await secondFactorStep(
      controller(),
      'totp',
      authRequestId,
      { code: await codeNow(someone.secret) },
      { as: 'form' },
    );

    expectToCallback(passed, authRequestId);
    const after = await authQueries(controller(), authRequestId);
    expect(after.body).toEqual({ authQueries: [] });
    expect(after.headers['totp-required']).toBeUndefined();
    const tokens = await exchangeCode(controller(), await codeAfterLogin(controller(), passed), verifier);
    expect(tokens.status, tokens.text).toBe(200);
    expect(claimsOf(tokens.body.access_token)).toMatchObject({ sub: someone.identityId, amr: ['pwd', 'totp'] });
  });

  it('refuses a wrong code with the reference 400, counts it, and ends the login at the fifth', async () => {
    const someone = await userWithTotp('oidc-wrong-code');
    freshMfaWindow();
    const { authRequestId } = await authorize(controller());
    expectOwesTotp(await passwordLogin(controller(), authRequestId, someone.username, someone.password), true);

    for (let miss = 1; miss < 5; miss++) {
      expectWrongCode(await secondFactorStep(controller(), 'totp', authRequestId, { code: '000000' }));
    }
    const fifth = await secondFactorStep(controller(), 'totp', authRequestId, { code: '000000' });
    const rightCode = await secondFactorStep(controller(), 'totp', authRequestId, {
      code: await codeNow(someone.secret),
    });

    expectRefused(fifth, 'UNAUTHORIZED');
    expectRefused(rightCode, 'UNAUTHORIZED');
    expect((await controller().call('GET', `/oidc/authorize/callback?id=${authRequestId}`)).status).toBe(400);
    const missing = await secondFactorStep(controller(), 'totp', authRequestId);
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('COULD_NOT_VALIDATE');
  });

  it('takes a recovery code once, and refuses a login whose code throttle is spent', async () => {
    const someone = await userWithTotp('oidc-recovery');
    freshMfaWindow();
    const first = await authorize(controller());
    await passwordLogin(controller(), first.authRequestId, someone.username, someone.password);
    const recovery = someone.recoveryCodes[0]!;
    expectToCallback(
      await secondFactorStep(controller(), 'totp', first.authRequestId, { code: recovery }),
      first.authRequestId,
    );

    const second = await authorize(controller());
    await passwordLogin(controller(), second.authRequestId, someone.username, someone.password);
    expectWrongCode(await secondFactorStep(controller(), 'totp', second.authRequestId, { code: recovery }));

    // The MFA throttle (5 attempts a source and identity a window; the accepted one was given back): the legacy one.
    for (let attempt = 0; attempt < 4; attempt++) {
      await secondFactorStep(controller(), 'totp', second.authRequestId, { code: '000000' });
    }
    const third = await authorize(controller());
    await passwordLogin(controller(), third.authRequestId, someone.username, someone.password);
    const throttled = await secondFactorStep(controller(), 'totp', third.authRequestId, { code: '000000' });
    const throttledRight = await secondFactorStep(controller(), 'totp', third.authRequestId, {
      code: await codeNow(someone.secret),
    });
    for (const response of [throttled, throttledRight]) {
      expect(response.status, response.text).toBe(429);
      expect(response.body.error.code).toBe('SERVER_TOO_MANY_REQUESTS');
    }
  });

  it('enrolls TOTP during a login when the auth policy requires it and none is enrolled', async () => {
    const someone = await user('oidc-enroll', {}, { requireTotp: true });
    freshMfaWindow();
    const { authRequestId, verifier } = await authorize(controller());
    // The reference's own test logs in with JSON `{id, username, password}`.
    const loggedIn = await controller().call('POST', '/oidc/login/username', {
      body: { id: authRequestId, username: someone.username, password: someone.password },
    });
    expectOwesTotp(loggedIn, false);
    const notEnrolled = await secondFactorStep(controller(), 'totp', authRequestId, { code: '123456' });
    expect(notEnrolled.status).toBe(409);
    expect(notEnrolled.body.error.code).toBe('MFA_NOT_ENROLLED');

    const started = await secondFactorStep(controller(), 'totp/enroll', authRequestId);
    expect(started.status, started.text).toBe(201);
    expect(started.body).toMatchObject({
      id: someone.identityId,
      isVerified: false,
      provisioningUrl: expect.stringMatching(/^otpauth:\/\/totp\//),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(started.body.recoveryCodes).toHaveLength(20);
    expect(started.body.data).toBeUndefined();
    const again = await secondFactorStep(controller(), 'totp/enroll', authRequestId);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('MFA_EXISTS');

    // The C SDK's delete before it starts again: the id in the query, an empty form.
    const deleted = await controller().call('DELETE', `/oidc/login/totp/enroll?id=${authRequestId}`, form({}));
    expect(deleted.status, deleted.text).toBe(200);
    const restarted = await secondFactorStep(controller(), 'totp/enroll', authRequestId, {}, { as: 'form' });
    expect(restarted.status).toBe(201);
    const { provisioningUrl, recoveryCodes } = restarted.body;
    expect(provisioningUrl).not.toBe(started.body.provisioningUrl);

    expectWrongCode(await secondFactorStep(controller(), 'totp/enroll/verify', authRequestId, { code: '123456' }));
    expectWrongCode(
      await secondFactorStep(controller(), 'totp/enroll/verify', authRequestId, { code: recoveryCodes[0] }),
    );
    expect((await secondFactorStep(controller(), 'totp/enroll/verify', authRequestId, { code: '' })).status).toBe(400);
    const verified = await secondFactorStep(controller(), 'totp/enroll/verify', authRequestId, {
      code: await codeNow(secretOf(provisioningUrl)),
    });

    expectToCallback(verified, authRequestId);
    const tokens = await exchangeCode(controller(), await codeAfterLogin(controller(), verified), verifier);
    expect(claimsOf(tokens.body.access_token).amr).toEqual(['pwd', 'totp']);
    const next = await authorize(controller());
    expectOwesTotp(await passwordLogin(controller(), next.authRequestId, someone.username, someone.password), true);
    expect((await secondFactorStep(controller(), 'totp/enroll', next.authRequestId)).status).toBe(409);
    const verifiedDelete = await secondFactorStep(
      controller(),
      'totp/enroll',
      next.authRequestId,
      { code: '000000' },
      {
        method: 'DELETE',
      },
    );
    expectWrongCode(verifiedDelete);
  });

  it('answers 200 with the external JWT still owed once the code is given, as the reference test does', async () => {
    const { id: signer } = await certSigner('second-factor', {
      externalAuthUrl: 'https://idp.example.test/authorize',
      clientId: 'second-client',
      scopes: ['openid', 'email'],
    });
    const someone = await user('oidc-two-factors', {}, { requireTotp: true, requireExtJwtSigner: signer });
    freshMfaWindow();
    const { authRequestId } = await authorize(controller());
    const extJwtQuery = {
      typeId: 'EXT-JWT',
      provider: 'url',
      id: signer,
      httpUrl: 'https://idp.example.test/authorize',
      clientId: 'second-client',
      scopes: ['openid', 'email'],
    };

    const loggedIn = await passwordLogin(controller(), authRequestId, someone.username, someone.password);
    expect(loggedIn.status).toBe(200);
    expect(loggedIn.headers['totp-required']).toBe('true');
    expect(loggedIn.body).toEqual({ authQueries: [totpQuery(false), extJwtQuery] });
    const started = await secondFactorStep(controller(), 'totp/enroll', authRequestId);
    const verified = await secondFactorStep(controller(), 'totp/enroll/verify', authRequestId, {
      code: await codeNow(secretOf(started.body.provisioningUrl)),
    });

    expect(verified.status, verified.text).toBe(200);
    expect(verified.headers['totp-required']).toBeUndefined();
    expect(verified.body).toEqual({ authQueries: [extJwtQuery] });
    expect((await controller().call('GET', `/oidc/authorize/callback?id=${authRequestId}`)).status).toBe(400);
  });
});

describe('OIDC logins: a secondary external JWT', () => {
  it('takes the token with the login, or posted again to the login as the C SDK does, before or after the code', async () => {
    const signer = await certSigner('secondary', { externalAuthUrl: 'https://idp.example.test/second' });
    const extJwtQuery = expect.objectContaining({ typeId: 'EXT-JWT', id: signer.id });
    const someone = await userWithTotp('oidc-secondary');
    const onlyJwt = await user('oidc-secondary-only', {}, { requireExtJwtSigner: signer.id });

    // With the login: nothing more is owed.
    const withLogin = await authorize(controller());
    const given = await controller().call('POST', '/oidc/login/password', {
      ...form({ id: withLogin.authRequestId, username: onlyJwt.username, password: onlyJwt.password }),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Bearer ${await signer.jwtFor(onlyJwt.identityId)}`,
      },
    });
    expectToCallback(given, withLogin.authRequestId);
    const tokens = await exchangeCode(controller(), await codeAfterLogin(controller(), given), withLogin.verifier);
    expect(claimsOf(tokens.body.access_token).amr).toEqual(['pwd', `ejs:${signer.id}`]);

    // Posted again: a token naming someone else changes nothing; the identity's own completes the login.
    const later = await authorize(controller());
    const owing = await passwordLogin(controller(), later.authRequestId, onlyJwt.username, onlyJwt.password);
    expect(owing.status).toBe(200);
    expect(owing.headers['totp-required']).toBeUndefined();
    expect(owing.body).toEqual({ authQueries: [extJwtQuery] });
    const foreign = await jsonLogin(
      controller(),
      'password',
      later.authRequestId,
      {},
      { bearer: await signer.jwtFor(someone.identityId) },
    );
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({ authQueries: [extJwtQuery] });
    const own = await jsonLogin(
      controller(),
      'password',
      later.authRequestId,
      {},
      { bearer: await signer.jwtFor(onlyJwt.identityId) },
    );
    expectToCallback(own, later.authRequestId);

    // Both factors, the token first: the code is still owed, then completes the login.
    await call('PATCH', `/auth-policies/${someone.policyId}`, { secondary: { requireExtJwtSigner: signer.id } });
    const both = await authorize(controller());
    const loggedIn = await passwordLogin(controller(), both.authRequestId, someone.username, someone.password);
    expect(loggedIn.body).toEqual({ authQueries: [totpQuery(true), extJwtQuery] });
    const tokenFirst = await jsonLogin(
      controller(),
      'password',
      both.authRequestId,
      {},
      { bearer: await signer.jwtFor(someone.identityId) },
    );
    expectOwesTotp(tokenFirst, true);
    expect((await controller().call('GET', `/oidc/authorize/callback?id=${both.authRequestId}`)).status).toBe(400);
    const codeLast = await secondFactorStep(controller(), 'totp', both.authRequestId, {
      code: await codeNow(someone.secret),
    });
    expectToCallback(codeLast, both.authRequestId);
  });
});

describe('OIDC logins: certificate and external JWT', () => {
  it('logs a device in with its client certificate and the C SDK JSON body, its id in the query', async () => {
    const device = await enrolledDevice(controller, call, unique('oidc-device'));
    const { authRequestId, verifier, loginPath } = await authorize(controller(), { cert: device.credentials });
    expect(loginPath).toBe(`/oidc/login/cert?authRequestID=${authRequestId}`);
    const page = await controller().call('GET', loginPath, { cert: device.credentials });
    expect(page.headers['auth-request-id']).toBe(authRequestId);
    const sdkInfo = { type: 'ziti-sdk-c', version: '1.18.2', appId: 'oidc-test' };
    const envInfo = { os: 'linux', arch: 'x86_64', hostname: 'oidc-host' };

    expectRefused(await jsonLogin(controller(), 'cert', authRequestId, { sdkInfo, envInfo }));
    const loggedIn = await jsonLogin(
      controller(),
      'cert',
      authRequestId,
      { sdkInfo, envInfo, configTypes: [] },
      { cert: device.credentials },
    );

    expectToCallback(loggedIn, authRequestId);
    const tokens = await exchangeCode(controller(), await codeAfterLogin(controller(), loggedIn), verifier);
    const access = claimsOf(tokens.body.access_token);
    expect(access).toMatchObject({ sub: device.id, amr: ['mtls'] });
    expect(access.z_cfs).toEqual([expect.stringMatching(/^[0-9a-f]{40}$/)]);
    const identity = await call('GET', `/identities/${device.id}`);
    expect(identity.body.data.sdkInfo).toMatchObject(sdkInfo);
    expect(identity.body.data.envInfo).toMatchObject(envInfo);
  });

  it('logs in with an external JWT as bearer, and refuses a missing or foreign one as the legacy login does', async () => {
    const { id: signer, jwtFor } = await certSigner('oidc-primary');
    const policy = authPolicyBody(unique('oidc-ext-jwt-policy'));
    policy.primary.extJwt = { allowed: true, allowedSigners: [signer] };
    const identityId = await createdId('/identities', {
      name: unique('oidc-federated'),
      type: 'User',
      isAdmin: false,
      authPolicyId: await createPolicy(policy),
    });
    const { authRequestId, verifier, loginPath } = await authorize(controller(), { method: 'ext-jwt' });
    expect(loginPath).toBe(`/oidc/login/ext-jwt?authRequestID=${authRequestId}`);

    expectRefused(await jsonLogin(controller(), 'ext-jwt', authRequestId));
    expectRefused(await jsonLogin(controller(), 'ext-jwt', authRequestId, {}, { bearer: await jwtFor('nobody') }));
    const loggedIn = await jsonLogin(controller(), 'ext-jwt', authRequestId, {}, { bearer: await jwtFor(identityId) });

    expectToCallback(loggedIn, authRequestId);
    const tokens = await exchangeCode(controller(), await codeAfterLogin(controller(), loggedIn), verifier);
    expect(claimsOf(tokens.body.access_token)).toMatchObject({ sub: identityId, z_authid: signer, amr: ['ext-jwt'] });
  });
});

describe('OIDC logins: refused as POST /authenticate refuses', () => {
  it('locks a password out after the policy’s wrong attempts, for OIDC and legacy logins alike', async () => {
    const someone = await user('oidc-lockout', { maxAttempts: 2, lockoutDurationMinutes: 1 });
    const { authRequestId } = await authorize(controller());

    expectRefused(await passwordLogin(controller(), authRequestId, someone.username, 'wrong-password'));
    expectRefused(await passwordLogin(controller(), authRequestId, someone.username, 'wrong-password'));
    expectRefused(await passwordLogin(controller(), authRequestId, someone.username, someone.password));
    expect((await login(someone.username, someone.password)).status).toBe(401);
    controller().advanceClock(2 * MINUTE);

    expectToCallback(
      await passwordLogin(controller(), authRequestId, someone.username, someone.password),
      authRequestId,
    );
  });

  it('refuses a disabled identity, before its login and between its login and its code', async () => {
    const disabled = await user('oidc-disabled');
    await call('POST', `/identities/${disabled.identityId}/disable`, { durationMinutes: 0 });
    const first = await authorize(controller());
    expectRefused(await passwordLogin(controller(), first.authRequestId, disabled.username, disabled.password));

    const midway = await userWithTotp('oidc-disabled-midway');
    const second = await authorize(controller());
    expectOwesTotp(await passwordLogin(controller(), second.authRequestId, midway.username, midway.password), true);
    await call('POST', `/identities/${midway.identityId}/disable`, { durationMinutes: 0 });
    const code = await secondFactorStep(controller(), 'totp', second.authRequestId, {
      code: await codeNow(midway.secret),
    });

    expectRefused(code, 'UNAUTHORIZED');
  });

  it('refuses a primary method the auth policy does not allow', async () => {
    const someone = await user('oidc-no-password', { allowed: false });
    const { authRequestId } = await authorize(controller());

    expectRefused(await passwordLogin(controller(), authRequestId, someone.username, someone.password));
  });

  it('throttles password attempts per source and username as the legacy login does', async () => {
    const someone = await user('oidc-throttled');
    const windowMs = 60_000;
    const now = controller().deps.now().getTime();
    controller().advanceClock(windowMs - (now % windowMs) + 10);
    const { authRequestId } = await authorize(controller());
    const attempt = (password: string) =>
      controller().call('POST', '/oidc/login/password', {
        ...form({ id: authRequestId, username: someone.username, password }),
        sourceAddress: '127.0.0.31',
      });

    for (let i = 0; i < 10; i++) expectRefused(await attempt('wrong-password'));
    const throttled = await attempt(someone.password);

    expect(throttled.status).toBe(429);
    expect(throttled.body.error.code).toBe('SERVER_TOO_MANY_REQUESTS');
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('refuses every step of an auth request older than ten minutes', async () => {
    const someone = await userWithTotp('oidc-expired');
    const unused = await authorize(controller());
    const owing = await authorize(controller());
    expectOwesTotp(await passwordLogin(controller(), owing.authRequestId, someone.username, someone.password), true);
    controller().advanceClock(10 * MINUTE + 1000);

    const loginStep = await passwordLogin(controller(), unused.authRequestId, someone.username, someone.password);
    const page = await controller().call('GET', unused.loginPath);
    const codeStep = await secondFactorStep(controller(), 'totp', owing.authRequestId, {
      code: await codeNow(someone.secret),
    });
    const enrollStep = await secondFactorStep(controller(), 'totp/enroll', owing.authRequestId);
    const queries = await authQueries(controller(), owing.authRequestId);
    const callback = await controller().call('GET', `/oidc/authorize/callback?id=${owing.authRequestId}`);

    for (const response of [loginStep, page, codeStep, enrollStep, callback]) {
      expect(response.status, response.text).toBe(404);
      expect(response.body).toMatchObject({ error: 'invalid_request' });
    }
    expectRefused(queries);
  });
});
