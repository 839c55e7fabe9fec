import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, importPKCS8, type JWK, type JWTPayload, SignJWT } from 'jose';
import { generate } from 'otplib';
import { beforeAll, describe, expect, it } from 'vitest';
import { createServerCertificate, type TlsMaterial } from '#local/tls-certificate.ts';
import { type ControllerConfig, loadConfig } from '#shared/config.ts';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { dynamoDbTracker } from '../support/dynamodb-tracker.ts';
import { authPolicyBody, M, managementFixtures } from '../support/management-fixtures.ts';
import { startTestController, type TestController } from '../support/test-controller.ts';

const C = '/edge/client/v1';

/** The loopback identity provider: a JWKS per path, and paths that hang, answer garbage or too much. */
interface Provider {
  origin: string;
  jwks: { keys: JWK[] };
  fetches: number;
}

const provider: Provider = { origin: '', jwks: { keys: [] }, fetches: 0 };
let tls: TlsMaterial;
let jwksServer: Server;

function serveProvider(): Promise<void> {
  jwksServer = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    if (request.url?.startsWith('/jwks')) {
      provider.fetches++;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(provider.jwks));
    } else if (request.url === '/garbage') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": not json');
    } else if (request.url === '/huge') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: [], padding: 'x'.repeat(200 * 1024) }));
    } else if (request.url === '/hang') {
      // Never answers; the controller must give up on its own.
    } else {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) => {
    jwksServer.listen(0, '127.0.0.1', () => {
      provider.origin = `https://127.0.0.1:${(jwksServer.address() as AddressInfo).port}`;
      resolve();
    });
  });
}

// Filled before the controller starts (this hook is registered first), so it trusts the provider's certificate.
const overrides: Partial<ControllerConfig> = {};
beforeAll(async () => {
  tls = await createServerCertificate();
  await serveProvider();
  Object.assign(overrides, {
    jwks: { ...loadConfig({}).jwks, trustedCaPem: tls.cert, timeoutMs: 500, refetchCooldownSeconds: 30 },
  } satisfies Partial<ControllerConfig>);
  return () => {
    jwksServer.closeAllConnections();
    jwksServer.close();
  };
});

const { controller, call, createdId, userUnder, login } = useAdminController(overrides);

const ISSUER = 'https://idp.example.test';
const AUDIENCE = 'ziti-controller';

async function rsaKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}
type SigningKey = Awaited<ReturnType<typeof rsaKey>>;

/**
 * A token of the test's identity provider; `exp` and `nbf` in seconds since the epoch when given. A null `audience`
 * or `exp` leaves that claim out.
 */
function sign(
  key: SigningKey,
  claims: JWTPayload,
  options: { issuer?: string; audience?: string | null; exp?: number | null; nbf?: number } = {},
) {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: key.kid })
    .setIssuer(options.issuer ?? ISSUER);
  if (options.audience !== null) jwt.setAudience(options.audience ?? AUDIENCE);
  if (options.exp !== null) jwt.setExpirationTime(options.exp ?? '10m');
  if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
  return jwt.sign(key.privateKey);
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function extJwtLogin(token: string | undefined, api: 'client' | 'management' = 'management') {
  return controller().call('POST', `${api === 'client' ? C : M}/authenticate?method=ext-jwt`, {
    body: {},
    ...(token !== undefined ? { headers: { authorization: `Bearer ${token}` } } : {}),
  });
}

function expectRefused(response: Awaited<ReturnType<typeof extJwtLogin>>) {
  expect(response.status).toBe(401);
  expect(response.body.error.code).toBe('INVALID_AUTH');
  expect(response.body.error.message).toBe('The credentials supplied are not valid.');
  expect(response.headers['zt-session']).toBeUndefined();
}

function signerBody(name: string, extra: Record<string, unknown>) {
  return { name, enabled: true, issuer: `${ISSUER}/${name}`, audience: AUDIENCE, ...extra };
}

/** A new identity whose auth policy (`<name>-policy`) allows ext-jwt logins with one signer only; its id. */
async function identityOnlyFor(
  createdId: (path: string, body: unknown) => Promise<string>,
  signer: string,
  name: string,
): Promise<string> {
  const policy = authPolicyBody(`${name}-policy`);
  policy.primary.extJwt = { allowed: true, allowedSigners: [signer] };
  const authPolicyId = await createdId('/auth-policies', policy);
  return createdId('/identities', { name, type: 'User', isAdmin: false, authPolicyId });
}

let key1: SigningKey;
let signerId: string;
let policyId: string;
let identityId: string;

beforeAll(async () => {
  key1 = await rsaKey('key-1');
  provider.jwks = { keys: [key1.jwk] };
  signerId = await createdId('/external-jwt-signers', {
    name: 'idp',
    enabled: true,
    issuer: ISSUER,
    audience: AUDIENCE,
    jwksEndpoint: `${provider.origin}/jwks`,
    externalAuthUrl: 'https://idp.example.test/authorize',
    clientId: 'ziti-client',
    scopes: ['openid'],
  });
  const policy = authPolicyBody('ext-jwt-only');
  policy.primary.extJwt = { allowed: true, allowedSigners: [signerId] };
  policyId = await createdId('/auth-policies', policy);
  identityId = await createdId('/identities', {
    name: 'federated',
    type: 'User',
    isAdmin: false,
    authPolicyId: policyId,
  });
});

describe('POST /authenticate?method=ext-jwt', () => {
  it('logs in the identity the token names and answers the session as a password login does', async () => {
    const token = await sign(key1, { sub: identityId });
    const response = await extJwtLogin(token);
    expect(response.status).toBe(200);
    expectMatchesSpec('management', 'POST', '/authenticate', 200, response.body);
    expect(response.body.data.identityId).toBe(identityId);
    expect(response.body.data.authenticatorId).toBe(signerId);
    expect(response.headers['zt-session']).toBe(response.body.data.token);
    const me = await controller().call('GET', `${C}/current-identity`, { token: response.body.data.token });
    expect(me.status).toBe(200);
    expect(me.body.data.id).toBe(identityId);
  });

  it('works on the client API too, from the cached key set (no new fetch)', async () => {
    const before = provider.fetches;
    const response = await extJwtLogin(await sign(key1, { sub: identityId }), 'client');
    expect(response.status).toBe(200);
    expectMatchesSpec('client', 'POST', '/authenticate', 200, response.body);
    expect(provider.fetches).toBe(before);
  });

  it('reads the identity, its MFA and the default auth policy in one batch (a policy of its own: one more read)', async () => {
    const token = await sign(key1, { sub: identityId });
    expect((await extJwtLogin(token)).status).toBe(200);
    let status = 0;
    const trips = await dynamoDbTracker(controller().deps.store.db).measure(async () => {
      status = (await extJwtLogin(token)).status;
    });
    expect(status).toBe(200);
    // The throttle counter with the issuer's marker, the signer, one batch (identity, MFA, default auth policy), this
    // identity's own auth policy, the session's transaction.
    expect(trips).toEqual({ waves: 5, requests: 6 });
  });

  it('maps the configured claim to externalId when the signer says so', async () => {
    const key = await rsaKey('ext-id-key');
    provider.jwks = { keys: [key1.jwk, key.jwk] };
    const id = await createdId(
      '/external-jwt-signers',
      signerBody('by-email', {
        jwksEndpoint: `${provider.origin}/jwks?by-email`,
        claimsProperty: 'email',
        useExternalId: true,
      }),
    );
    const policy = authPolicyBody('by-email-policy');
    policy.primary.extJwt = { allowed: true, allowedSigners: [id] };
    const byEmailPolicy = await createdId('/auth-policies', policy);
    const userId = await createdId('/identities', {
      name: 'alice',
      type: 'User',
      isAdmin: false,
      authPolicyId: byEmailPolicy,
      externalId: 'alice@example.test',
    });
    const token = await sign(key, { sub: 'ignored', email: 'alice@example.test' }, { issuer: `${ISSUER}/by-email` });
    const response = await extJwtLogin(token);
    expect(response.status).toBe(200);
    expect(response.body.data.identityId).toBe(userId);
    // The same claim as an id names nobody.
    expectRefused(await extJwtLogin(await sign(key1, { sub: 'alice@example.test' })));
  });

  it('verifies a certificate signer with the certificate key when the kid matches', async () => {
    const material = await createServerCertificate(['signer.example.test']);
    const id = await createdId(
      '/external-jwt-signers',
      signerBody('cert-signer', { certPem: material.cert, kid: 'cert-kid' }),
    );
    const userId = await identityOnlyFor(createdId, id, 'cert-signed');
    const privateKey = await importPKCS8(material.key, 'ES256');
    const signWith = (kid: string) =>
      new SignJWT({ sub: userId })
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(`${ISSUER}/cert-signer`)
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(privateKey);
    expect((await extJwtLogin(await signWith('cert-kid'), 'client')).status).toBe(200);
    expectRefused(await extJwtLogin(await signWith('other-kid')));
  });

  it('follows a key rotation: an unknown kid fetches the key set again, at most once per cooldown', async () => {
    const key2 = await rsaKey('key-2');
    provider.jwks = { keys: [key2.jwk] };
    controller().advanceClock(31_000);
    const before = provider.fetches;
    const response = await extJwtLogin(await sign(key2, { sub: identityId }));
    expect(response.status).toBe(200);
    expect(provider.fetches).toBe(before + 1);
    // The retired key is gone from the set; repeated unknown kids inside the cooldown fetch nothing more.
    for (let i = 0; i < 3; i++) expectRefused(await extJwtLogin(await sign(key1, { sub: identityId })));
    const unknown = await rsaKey('never-published');
    expectRefused(await extJwtLogin(await sign(unknown, { sub: identityId })));
    expect(provider.fetches).toBe(before + 1);
    provider.jwks = { keys: [key1.jwk, key2.jwk] };
    controller().advanceClock(31_000);
    expect((await extJwtLogin(await sign(key1, { sub: identityId }))).status).toBe(200);
  });
});

describe('ext-jwt refusals: each 401 INVALID_AUTH, never a session, never the reason', () => {
  const claims = () => ({ sub: identityId });

  it('refuses no token, garbage and oversized tokens', async () => {
    expectRefused(await extJwtLogin(undefined));
    expectRefused(await extJwtLogin('not-a-jwt'));
    expectRefused(await extJwtLogin('a.b.c'));
    expectRefused(await extJwtLogin(`${b64({ alg: 'RS256' })}.${b64('x')}.`));
    // Validly signed but over the 8 KiB limit: refused unread.
    const big = await sign(key1, { ...claims(), padding: 'x'.repeat(9 * 1024) });
    expectRefused(await extJwtLogin(big));
    // Larger than the server takes in headers: refused before the controller sees it, still no session.
    const huge = await sign(key1, { ...claims(), padding: 'x'.repeat(17 * 1024) });
    const response = await extJwtLogin(huge);
    expect(response.status).toBe(431);
    expect(response.headers['zt-session']).toBeUndefined();
  });

  it('refuses alg none and HMAC tokens, whatever key they name', async () => {
    const payload = { ...claims(), iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600 };
    expectRefused(await extJwtLogin(`${b64({ alg: 'none', kid: key1.kid })}.${b64(payload)}.`));
    // HS256 "signed" with the public key's bytes: the classic confusion attack.
    const secret = new TextEncoder().encode(JSON.stringify(key1.jwk));
    const hs = await new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid: key1.kid }).sign(secret);
    expectRefused(await extJwtLogin(hs));
  });

  it('refuses a wrong signature, issuer, audience, an expired or not-yet-valid token', async () => {
    const forger = await rsaKey(key1.kid);
    expectRefused(await extJwtLogin(await sign(forger, claims())));
    expectRefused(await extJwtLogin(await sign(key1, claims(), { issuer: 'https://other.example.test' })));
    expectRefused(await extJwtLogin(await sign(key1, claims(), { audience: 'someone-else' })));
    const now = Math.floor(controller().deps.now().getTime() / 1000);
    expectRefused(await extJwtLogin(await sign(key1, claims(), { exp: now - 120 })));
    expectRefused(await extJwtLogin(await sign(key1, claims(), { nbf: now + 600, exp: now + 1200 })));
    // Within the clock skew a just-expired token still passes.
    const justExpired = await sign(key1, claims(), { exp: now - 5 });
    expect((await extJwtLogin(justExpired)).status).toBe(200);
  });

  it('refuses a token without exp at login, as the secondary factor and for token enrollment', async () => {
    const noExp = await sign(key1, claims(), { exp: null });
    expectRefused(await extJwtLogin(noExp));
    expect(controller().logLines.some((line) => line.includes('missing required \\"exp\\" claim'))).toBe(true);

    const policy = authPolicyBody('password-then-idp-no-exp', {}, { requireExtJwtSigner: signerId });
    const user = await userUnder(await createdId('/auth-policies', policy), 'no-exp-second-factor');
    const withPassword = await controller().call('POST', `${M}/authenticate?method=password`, {
      body: { username: user.username, password: user.password },
      headers: { authorization: `Bearer ${await sign(key1, { sub: user.identityId }, { exp: null })}` },
    });
    expect(withPassword.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: false });
    const bearer = { authorization: `Bearer ${await sign(key1, { sub: user.identityId }, { exp: null })}` };
    const token = withPassword.body.data.token as string;
    expect((await controller().call('GET', `${C}/current-identity`, { token, headers: bearer })).status).toBe(401);

    await createdId(
      '/external-jwt-signers',
      signerBody('enroller', { jwksEndpoint: `${provider.origin}/jwks`, enrollToTokenEnabled: true }),
    );
    const enroll = async (sub: string, exp: number | null | undefined) => {
      const jwt = await sign(key1, { sub }, { issuer: `${ISSUER}/enroller`, exp });
      return controller().call('POST', `${C}/enroll/token`, { body: {}, headers: { authorization: `Bearer ${jwt}` } });
    };
    const refused = await enroll('enrolls-without-exp', null);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_AUTH');
    expect((await enroll('enrolls-with-exp', undefined)).status).toBe(200);
  });

  it('refuses every token of a signer without an audience, until it has one', async () => {
    const created = await call(
      'POST',
      '/external-jwt-signers',
      signerBody('no-audience', { audience: null, jwksEndpoint: `${provider.origin}/jwks` }),
    );
    // The reference lets an admin save a signer without an audience; it just vouches for nobody.
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const userId = await identityOnlyFor(createdId, id, 'under-no-audience');
    const issuer = `${ISSUER}/no-audience`;
    for (const audience of ['anything', AUDIENCE, null]) {
      expectRefused(await extJwtLogin(await sign(key1, { sub: userId }, { issuer, audience })));
    }
    expect(controller().logLines.some((line) => line.includes(`signer ${id} has no audience`))).toBe(true);

    expect((await call('PATCH', `/external-jwt-signers/${id}`, { audience: AUDIENCE })).status).toBe(200);
    expectRefused(await extJwtLogin(await sign(key1, { sub: userId }, { issuer, audience: 'anything' })));
    expect((await extJwtLogin(await sign(key1, { sub: userId }, { issuer }))).status).toBe(200);
  });

  it('refuses unknown subjects, a disabled signer and auth policies that do not allow the signer', async () => {
    expectRefused(await extJwtLogin(await sign(key1, { sub: 'nobody' })));
    expectRefused(await extJwtLogin(await sign(key1, {})));

    const other = await createdId(
      '/external-jwt-signers',
      signerBody('other', { jwksEndpoint: `${provider.origin}/jwks` }),
    );
    const narrow = authPolicyBody('only-other');
    narrow.primary.extJwt = { allowed: true, allowedSigners: [other] };
    const closed = authPolicyBody('ext-jwt-closed');
    closed.primary.extJwt = { allowed: false, allowedSigners: [] };
    for (const policy of [narrow, closed]) {
      const userId = await createdId('/identities', {
        name: `under-${policy.name}`,
        type: 'User',
        isAdmin: false,
        authPolicyId: await createdId('/auth-policies', policy),
      });
      expectRefused(await extJwtLogin(await sign(key1, { sub: userId })));
    }

    expect((await call('PATCH', `/external-jwt-signers/${signerId}`, { enabled: false })).status).toBe(200);
    expectRefused(await extJwtLogin(await sign(key1, claims())));
    expect((await call('PATCH', `/external-jwt-signers/${signerId}`, { enabled: true })).status).toBe(200);
    expect((await extJwtLogin(await sign(key1, claims()))).status).toBe(200);
  });

  it('refuses when the JWKS endpoint hangs, answers garbage, too much or 404, without a 5xx', async () => {
    for (const path of ['hang', 'garbage', 'huge', 'missing']) {
      await createdId('/external-jwt-signers', signerBody(path, { jwksEndpoint: `${provider.origin}/${path}` }));
      const token = await sign(key1, claims(), { issuer: `${ISSUER}/${path}` });
      const started = Date.now();
      expectRefused(await extJwtLogin(token));
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });

  it('writes why to the log, never the token', async () => {
    const token = await sign(key1, claims(), { audience: 'someone-else' });
    expectRefused(await extJwtLogin(token));
    const lines = controller().logLines;
    expect(lines.some((line) => line.includes('ext-jwt login refused'))).toBe(true);
    expect(lines.some((line) => line.includes(token) || line.includes(token.split('.')[2]!))).toBe(false);
  });
});

describe('JWKS endpoints where private addresses are not allowed (as in Lambda)', () => {
  let lambdaLike: TestController | undefined;
  const started = () => lambdaLike ?? expect.unreachable('the controller starts in beforeAll');
  let adminToken = '';
  const fixtures = managementFixtures(started, () => adminToken);

  beforeAll(async () => {
    const jwks = { ...(overrides.jwks ?? loadConfig({}).jwks), allowPrivateAddresses: false };
    lambdaLike = await startTestController({ ...overrides, jwks });
    adminToken = await lambdaLike.login();
    return () => lambdaLike?.close();
  });

  it('authenticates nobody through a signer whose JWKS is on loopback, open port or not, and logs why', async () => {
    const closedPort = 'https://127.0.0.1:1';
    for (const [name, origin] of [
      ['on-loopback', provider.origin],
      ['on-closed-port', closedPort],
    ] as const) {
      const id = await fixtures.createdId(
        '/external-jwt-signers',
        signerBody(name, { jwksEndpoint: `${origin}/jwks?${name}` }),
      );
      const userId = await identityOnlyFor(fixtures.createdId, id, `${name}-user`);
      const before = provider.fetches;
      const token = await sign(key1, { sub: userId }, { issuer: `${ISSUER}/${name}` });
      const response = await started().call('POST', `${M}/authenticate?method=ext-jwt`, {
        body: {},
        headers: { authorization: `Bearer ${token}` },
      });
      expectRefused(response);
      expect(provider.fetches).toBe(before);
      // Refused for the address before any connection: an open and a closed port read the same.
      const refusal =
        started()
          .logLines.filter((line) => line.includes('ext-jwt login refused'))
          .at(-1) ?? '';
      expect(refusal).toContain('JWKS host 127.0.0.1 refused: 127.0.0.1 is a loopback address');
      expect(refusal).not.toContain(token);
    }
  });
});

describe('client GET /external-jwt-signers (anonymous)', () => {
  it('lists the enabled signers with their client-facing fields only', async () => {
    const disabled = await createdId(
      '/external-jwt-signers',
      signerBody('switched-off', { enabled: false, jwksEndpoint: `${provider.origin}/jwks` }),
    );
    const response = await controller().call('GET', `${C}/external-jwt-signers?limit=500`);
    expect(response.status).toBe(200);
    expectMatchesSpec('client', 'GET', '/external-jwt-signers', 200, response.body);
    const ids = response.body.data.map((signer: { id: string }) => signer.id);
    expect(ids).toContain(signerId);
    expect(ids).not.toContain(disabled);
    const idp = response.body.data.find((signer: { id: string }) => signer.id === signerId);
    expect(idp).toMatchObject({ name: 'idp', clientId: 'ziti-client', scopes: ['openid'] });
    for (const hidden of ['issuer', 'jwksEndpoint', 'certPem', 'kid', 'claimsProperty', 'enabled']) {
      expect(idp).not.toHaveProperty(hidden);
    }
  });

  it('filters by name, refuses filters on hidden fields, and pages', async () => {
    const byName = await controller().call(
      'GET',
      `${C}/external-jwt-signers?filter=${encodeURIComponent('name = "idp"')}`,
    );
    expect(byName.status).toBe(200);
    expect(byName.body.data.map((signer: { id: string }) => signer.id)).toEqual([signerId]);
    const hidden = await controller().call(
      'GET',
      `${C}/external-jwt-signers?filter=${encodeURIComponent('issuer = "x"')}`,
    );
    expect(hidden.status).toBe(400);
    const paged = await controller().call('GET', `${C}/external-jwt-signers?limit=1`);
    expect(paged.status).toBe(200);
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body.meta.pagination.limit).toBe(1);
  });

  it('still serves the admin list on the management API and refuses it anonymously there', async () => {
    expect((await call('GET', '/external-jwt-signers')).body.data[0]).toHaveProperty('issuer');
    expect((await controller().call('GET', `${M}/external-jwt-signers`)).status).toBe(401);
  });
});

describe('secondary ext-jwt (auth policy secondary.requireExtJwtSigner)', () => {
  it('keeps a password login partial, with an EXT-JWT auth query, until a request brings the signer token', async () => {
    const policy = authPolicyBody('password-then-idp', {}, { requireExtJwtSigner: signerId });
    const user = await userUnder(await createdId('/auth-policies', policy), 'second-factor-user');
    const idpToken = await sign(key1, { sub: user.identityId });

    const partial = await login(user.username, user.password);
    expect(partial.status).toBe(200);
    expectMatchesSpec('management', 'POST', '/authenticate', 200, partial.body);
    expect(partial.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: false });
    expect(partial.body.data.authQueries).toEqual([
      {
        typeId: 'EXT-JWT',
        provider: 'url',
        id: signerId,
        httpUrl: 'https://idp.example.test/authorize',
        clientId: 'ziti-client',
        scopes: ['openid'],
      },
    ]);
    const token = partial.body.data.token as string;
    const current = await controller().call('GET', `${M}/current-api-session`, { token });
    expect(current.status).toBe(200);
    expect(current.body.data.authQueries).toEqual(partial.body.data.authQueries);

    expect((await controller().call('GET', `${C}/current-identity`, { token })).status).toBe(401);
    // Another identity's token, or a token of a signer the policy does not name, completes nothing.
    for (const bearer of [await sign(key1, { sub: identityId }), 'garbage']) {
      const refused = await controller().call('GET', `${C}/current-identity`, {
        token,
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(refused.status).toBe(401);
    }

    const withJwt = await controller().call('GET', `${C}/current-identity`, {
      token,
      headers: { authorization: `Bearer ${idpToken}` },
    });
    expect(withJwt.status).toBe(200);
    expect(withJwt.body.data.id).toBe(user.identityId);
  });

  it('records the token on the session once it completes it: no query left, no bearer needed later', async () => {
    const policy = authPolicyBody('password-then-idp-once', {}, { requireExtJwtSigner: signerId });
    const user = await userUnder(await createdId('/auth-policies', policy), 'completes-once');
    const token = (await login(user.username, user.password)).body.data.token as string;
    const current = (headers: Record<string, string> = {}) =>
      controller().call('GET', `${M}/current-api-session`, { token, headers });

    // A bearer that proves nothing leaves the session partial, even on a route a partial session may use.
    const stillPartial = await current({ authorization: 'Bearer garbage' });
    expect(stillPartial.status).toBe(200);
    expect(stillPartial.body.data.authQueries.map((query: { typeId: string }) => query.typeId)).toEqual(['EXT-JWT']);

    const completed = await current({ authorization: `Bearer ${await sign(key1, { sub: user.identityId })}` });
    expect(completed.status).toBe(200);
    expectMatchesSpec('management', 'GET', '/current-api-session', 200, completed.body);
    expect(completed.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: true, authQueries: [] });
    expect((await current()).body.data).toMatchObject({ isMfaComplete: true, authQueries: [] });
    expect((await call('GET', `/api-sessions/${completed.body.data.id}`)).body.data.isMfaComplete).toBe(true);

    // Later requests need no token, and one that is no good is not even looked at.
    const me = await controller().call('GET', `${C}/current-identity`, { token });
    expect(me.status).toBe(200);
    expect(me.body.data.id).toBe(user.identityId);
    const ignored = await controller().call('GET', `${C}/current-identity`, {
      token,
      headers: { authorization: 'Bearer garbage' },
    });
    expect(ignored.status).toBe(200);
  });

  it('tracks TOTP and the external JWT apart when the policy asks for both', async () => {
    const policy = authPolicyBody('totp-and-idp', {}, { requireExtJwtSigner: signerId, requireTotp: true });
    const user = await userUnder(await createdId('/auth-policies', policy), 'two-factors');
    const partial = await login(user.username, user.password);
    const token = partial.body.data.token as string;
    expect(partial.body.data.authQueries.map((query: { typeId: string }) => query.typeId)).toEqual(['MFA', 'EXT-JWT']);
    const bearer = { authorization: `Bearer ${await sign(key1, { sub: user.identityId })}` };
    // The JWT alone does not stand in for TOTP.
    expect((await controller().call('GET', `${C}/current-identity`, { token, headers: bearer })).status).toBe(401);

    expect((await controller().call('POST', `${C}/current-identity/mfa`, { token })).status).toBe(201);
    const detail = await controller().call('GET', `${C}/current-identity/mfa`, { token });
    const secret = new URL(detail.body.data.provisioningUrl).searchParams.get('secret')!;
    const code = await generate({ secret, epoch: Math.floor(controller().deps.now().getTime() / 1000) });
    const verified = await controller().call('POST', `${C}/current-identity/mfa/verify`, { token, body: { code } });
    expect(verified.status, verified.text).toBe(200);

    const current = await controller().call('GET', `${C}/current-api-session`, { token });
    expect(current.body.data).toMatchObject({ isMfaRequired: true, isMfaComplete: false });
    expect(current.body.data.authQueries.map((query: { typeId: string }) => query.typeId)).toEqual(['EXT-JWT']);
    expect((await controller().call('GET', `${C}/current-identity`, { token })).status).toBe(401);
    expect((await controller().call('GET', `${C}/current-identity`, { token, headers: bearer })).status).toBe(200);
  });

  it('counts wrong MFA codes of ext-jwt sessions against the identity, so the auth policy locks it', async () => {
    const policy = authPolicyBody('ext-jwt-with-lockout', { maxAttempts: 3, lockoutDurationMinutes: 5 });
    policy.primary.extJwt = { allowed: true, allowedSigners: [signerId] };
    const lockable = await createdId('/identities', {
      name: 'federated-with-mfa',
      type: 'User',
      isAdmin: false,
      authPolicyId: await createdId('/auth-policies', policy),
    });
    const bearer = { authorization: `Bearer ${await sign(key1, { sub: lockable })}` };
    const extJwtSession = async () =>
      (await controller().call('POST', `${C}/authenticate?method=ext-jwt`, { body: {}, headers: bearer })).body.data
        .token as string;
    const full = await extJwtSession();
    expect((await controller().call('POST', `${C}/current-identity/mfa`, { token: full })).status).toBe(201);
    const detail = await controller().call('GET', `${C}/current-identity/mfa`, { token: full });
    const secret = new URL(detail.body.data.provisioningUrl).searchParams.get('secret')!;
    const code = await generate({ secret, epoch: Math.floor(controller().deps.now().getTime() / 1000) });
    expect(
      (await controller().call('POST', `${C}/current-identity/mfa/verify`, { token: full, body: { code } })).status,
    ).toBe(200);

    const partial = await extJwtSession();
    for (let i = 0; i < 3; i++) {
      const wrong = await controller().call('POST', `${C}/authenticate/mfa`, {
        token: partial,
        body: { code: '000000' },
      });
      expect(wrong.status).toBe(401);
    }
    expect((await call('GET', `/identities/${lockable}`)).body.data.disabled).toBe(true);
    expect(
      (await controller().call('POST', `${C}/authenticate?method=ext-jwt`, { body: {}, headers: bearer })).status,
    ).toBe(401);
  });

  it('completes the session at login when the token comes with the password', async () => {
    const policy = authPolicyBody('password-with-idp', {}, { requireExtJwtSigner: signerId });
    const user = await userUnder(await createdId('/auth-policies', policy), 'both-at-once');
    const response = await controller().call('POST', `${M}/authenticate?method=password`, {
      body: { username: user.username, password: user.password },
      headers: { authorization: `Bearer ${await sign(key1, { sub: user.identityId })}` },
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ isMfaRequired: false, authQueries: [] });
    const me = await controller().call('GET', `${C}/current-identity`, { token: response.body.data.token });
    expect(me.status).toBe(200);
  });
});
