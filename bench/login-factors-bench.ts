import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { generate } from 'otplib';
import { defaultAuthPolicy } from '#shared/bootstrap.ts';
import type { SessionBenchOptions } from './api-session-bench.ts';
import { startBenchController } from './bench-controller.ts';
import { BASE, expectStatus, login } from './identity-scenarios.ts';
import { measureOperation, type OperationFigures } from './measure-operation.ts';
import { goSdkPasswordLogin } from './oidc-flows.ts';

/** One login kind measured: its figures, and how many JWKS fetches the measured logins made (ext-jwt). */
export interface LoginFactorRow {
  readonly label: string;
  readonly figures: OperationFigures;
  readonly jwksFetchesPerLogin?: number;
}

const PASSWORD = 'Bench-Passw0rd!';
const ISSUER = 'https://idp.bench.test';
const AUDIENCE = 'ziti-bench';

/**
 * Logins with their second factors, on a table of their own: a password login, a password login followed by
 * `/authenticate/mfa` with a fresh TOTP code (the controller's clock moves a step per run, since a code works once),
 * and an ext-jwt login whose signer's JWKS is already cached (the loopback provider counts its fetches); then the
 * same password logins through the OIDC provider as the Go SDK sends them (`oidc-flows.ts`: five requests, six with
 * the TOTP step), a run being the whole flow to its tokens.
 */
export async function loginFactorsBench(options: SessionBenchOptions): Promise<LoginFactorRow[]> {
  const fetches = { count: 0 };
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256' }] };
  const provider = createServer({ key: options.tls.key, cert: options.tls.cert }, (_request, response) => {
    fetches.count++;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  const providerOrigin = `https://127.0.0.1:${(provider.address() as AddressInfo).port}`;

  const bench = await startBenchController('bench-login-factors', options, (config) => ({
    ...config,
    jwks: { ...config.jwks, trustedCaPem: options.tls.cert },
  }));
  const { deps, meter, client } = bench;
  try {
    const admin = await login(client, options.adminUsername, options.adminPassword);
    const created = async (path: string, body: unknown) => {
      const response = expectStatus(await client.call('POST', `${BASE}${path}`, { body, token: admin }), 201, path);
      return (response.body as { data: { id: string } }).data.id;
    };
    const user = async (name: string) => {
      const identityId = await created('/identities', { name, type: 'User', isAdmin: false });
      await created('/authenticators', { identityId, method: 'updb', username: name, password: PASSWORD });
      return identityId;
    };
    await user('bench-plain');
    await user('bench-mfa');

    // Enroll TOTP for the MFA user as its app would.
    const code = () => generate({ secret, epoch: Math.floor(deps.now().getTime() / 1000) });
    const first = await login(client, 'bench-mfa', PASSWORD);
    expectStatus(await client.call('POST', `${BASE}/current-identity/mfa`, { token: first }), 201, 'enroll mfa');
    const detail = await client.call('GET', `${BASE}/current-identity/mfa`, { token: first });
    const url = (detail.body as { data: { provisioningUrl: string } }).data.provisioningUrl;
    const secret = new URL(url).searchParams.get('secret') ?? '';
    const verify = { body: { code: await code() }, token: first };
    expectStatus(await client.call('POST', `${BASE}/current-identity/mfa/verify`, verify), 200, 'verify mfa');

    // An external JWT signer with a JWKS endpoint, and an identity it logs in.
    const signerId = await created('/external-jwt-signers', {
      name: 'bench-idp',
      enabled: true,
      issuer: ISSUER,
      audience: AUDIENCE,
      jwksEndpoint: `${providerOrigin}/jwks`,
    });
    // The default policy's rules, with ext-jwt logins from this signer only.
    const { primary, secondary } = defaultAuthPolicy(deps);
    const policyId = await created('/auth-policies', {
      name: 'bench-ext-jwt',
      primary: { ...primary, extJwt: { allowed: true, allowedSigners: [signerId] } },
      secondary,
    });
    const federated = await created('/identities', {
      name: 'bench-fed',
      type: 'User',
      isAdmin: false,
      authPolicyId: policyId,
    });
    const jwt = await new SignJWT({ sub: federated })
      .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('24h')
      .sign(privateKey);

    const rows: LoginFactorRow[] = [];
    rows.push({
      label: 'password login, no MFA',
      figures: await measureOperation(
        async () => {
          await login(client, 'bench-plain', PASSWORD);
        },
        meter,
        options.measure,
      ),
    });
    rows.push({
      label: 'password login + `POST /authenticate/mfa`',
      figures: await measureOperation(
        async () => {
          bench.advanceClock(30_000);
          const token = await login(client, 'bench-mfa', PASSWORD);
          const passed = await client.call('POST', `${BASE}/authenticate/mfa`, { body: { code: await code() }, token });
          expectStatus(passed, 200, 'authenticate mfa');
        },
        meter,
        options.measure,
      ),
    });
    const extJwtLogin = async () => {
      const response = await client.call('POST', `${BASE}/authenticate?method=ext-jwt`, {
        body: {},
        headers: { authorization: `Bearer ${jwt}` },
      });
      expectStatus(response, 200, 'ext-jwt login');
    };
    await extJwtLogin();
    const fetchesBefore = fetches.count;
    const figures = await measureOperation(extJwtLogin, meter, { ...options.measure, warmUp: 0, warmUpMs: 0 });
    rows.push({
      label: 'ext-jwt login, JWKS cached',
      figures,
      jwksFetchesPerLogin: (fetches.count - fetchesBefore) / figures.iterations,
    });
    rows.push({
      label: 'OIDC password login (Go SDK: authorize, login page, login/password, callback, token)',
      figures: await measureOperation(
        async () => {
          await goSdkPasswordLogin(client, 'bench-plain', PASSWORD);
        },
        meter,
        options.measure,
      ),
    });
    rows.push({
      label: 'OIDC password login + `POST /oidc/login/totp` (Go SDK, six requests)',
      figures: await measureOperation(
        async () => {
          bench.advanceClock(30_000);
          await goSdkPasswordLogin(client, 'bench-mfa', PASSWORD, code);
        },
        meter,
        options.measure,
      ),
    });
    return rows;
  } finally {
    await bench.close();
    provider.closeAllConnections();
    provider.close();
  }
}
