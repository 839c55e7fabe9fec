import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { enrolledDevice } from '../support/enrolled-device.ts';
import { basicClient, claimsOf, pathOf, pkcePair, REDIRECT_URI } from '../support/oidc-client.ts';

/**
 * The C SDK's OIDC login (ziti-sdk-c 1.18.2, `library/oidc.c`), request by request as a run of its samples against
 * `npm start -- OIDC_AUTH=true` sent them (2026-12-08: `using OIDC authentication method`, services listed, its timed
 * refresh answered): the shapes that differ from a textbook client are kept exactly, since the SDK depends on them.
 * - `POST /oidc/authorize` with every parameter in the query and no body (`oidc_client_start`);
 * - the certificate login at the absolute path `/oidc/login/cert?id=`, a JSON body of `sdkInfo`, `envInfo`,
 *   `configTypes`;
 * - the code taken as everything after `code=` in the callback's `Location`, so the token request carries
 *   `code=<code>&state=<state>` unescaped and `state` twice (`code_cb`; tlsuv's form encoding escapes no `&`);
 * - the refresh with the client in `Authorization: Basic` and an empty secret, and in the form.
 */
const { controller, call, createdId } = useAdminController({
  oidc: { advertise: true, accessTokenSeconds: 1800, refreshTokenSeconds: 86_400 },
});

const C = '/edge/client/v1';

/** A form body exactly as given, encoded by hand as tlsuv does (`&` and `=` inside values left as they are). */
function rawForm(body: string) {
  return { rawBody: body, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
}

describe("the C SDK's OIDC login, as it sends it", () => {
  it('finds the provider, logs in with its certificate, lists its services and refreshes', async () => {
    const device = await enrolledDevice(controller, call, 'csdk-oidc-device', ['csdk-oidc']);
    await createdId('/services', { name: 'csdk-oidc-svc', roleAttributes: ['csdk-oidc-svc'] });
    await createdId('/service-policies', {
      name: 'csdk-oidc-dial',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#csdk-oidc'],
      serviceRoles: ['#csdk-oidc-svc'],
    });
    const cert = device.credentials;

    // 1-2. /version offers OIDC (capability and API), and discovery names the endpoints it keeps.
    const version = await controller().call('GET', `${C}/version`, { cert });
    expect(version.body.data.capabilities).toContain('OIDC_AUTH');
    const base = version.body.data.apiVersions['edge-oidc'].v1.apiBaseUrls[0] as string;
    const discovery = await controller().call('GET', `${new URL(base).pathname}/.well-known/openid-configuration`, {
      cert,
    });
    expect(discovery.status).toBe(200);
    const { authorization_endpoint: authorizeUrl, token_endpoint: tokenUrl } = discovery.body;

    // 3. The auth request: POST, parameters in the query, no body; a 302 whose Location has authRequestID.
    const { verifier, challenge } = pkcePair();
    const state = 'c5d7e0f9a1b2c3d4';
    const query = new URLSearchParams({
      client_id: 'openziti',
      scope: 'openid offline_access',
      response_type: 'code',
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
      audience: 'openziti',
    });
    const authorized = await controller().call('POST', `${new URL(authorizeUrl).pathname}?${query}`, { cert });
    expect(authorized.status).toBe(302);
    const loginPath = pathOf(authorized.headers.location);
    expect(loginPath).toMatch(/^\/oidc\/login\/cert\?authRequestID=/);
    const id = new URL(loginPath, 'https://x').searchParams.get('authRequestID')!;

    // 4. The certificate login at the absolute path, the id in the query, a JSON body: a 302 to the callback.
    const login = await controller().call('POST', `/oidc/login/cert?id=${id}`, {
      cert,
      body: {
        sdkInfo: { type: 'ziti-sdk-c', version: '1.18.2', appId: 'ziti_list', appVersion: '0.0.1' },
        envInfo: { os: 'Linux', arch: 'x86_64', osRelease: '6.1', osVersion: '#1 SMP' },
        configTypes: ['all'],
      },
    });
    expect(login.status).toBe(302);

    // 5. The callback, followed by its path: a 302 to the redirect URI with the code and the state.
    const callback = await controller().call('GET', pathOf(login.headers.location), { cert });
    expect(callback.status).toBe(302);
    const location = String(callback.headers.location);
    expect(location.startsWith(`${REDIRECT_URI}?code=`)).toBe(true);
    const afterCode = location.slice(location.indexOf('code=') + 'code='.length);
    expect(afterCode).toMatch(new RegExp(`^[A-Za-z0-9_-]+&state=${state}$`));

    // 6. The token request as tlsuv encodes it: everything after `code=` unescaped, so `state` comes twice.
    const token = await controller().call('POST', new URL(tokenUrl).pathname, {
      cert,
      ...rawForm(
        `code=${afterCode}&code_verifier=${verifier}&client_id=openziti&grant_type=authorization_code&` +
          `redirect_uri=${encodeURIComponent(REDIRECT_URI)}&state=${state}`,
      ),
    });
    expect(token.status).toBe(200);
    const access = token.body.access_token as string;
    expect(claimsOf(access)).toMatchObject({ sub: device.id, z_t: 'a', amr: ['mtls'] });
    // The SDK reads the refresh token's exp to know how long it may refresh.
    expect(Number(claimsOf(token.body.refresh_token).exp)).toBeGreaterThan(Number(claimsOf(access).exp));

    // 7. Its first API calls carry the access token, with its certificate.
    const bearer = { cert, headers: { authorization: `Bearer ${access}` } };
    for (const path of ['/current-identity', '/current-api-session', '/current-api-session/service-updates']) {
      expect((await controller().call('GET', `${C}${path}`, bearer)).status, path).toBe(200);
    }
    const services = await controller().call('GET', `${C}/services?configTypes=all`, bearer);
    expect(services.body.data.map((service: { name: string }) => service.name)).toEqual(['csdk-oidc-svc']);
    // Bound to the certificate of its login: the same token without it is refused.
    const withoutCert = await controller().call('GET', `${C}/current-identity`, {
      headers: { authorization: `Bearer ${access}` },
    });
    expect(withoutCert.status).toBe(401);

    // 8. The refresh: the client in Basic with an empty secret and in the form.
    const refreshed = await controller().call('POST', new URL(tokenUrl).pathname, {
      cert,
      rawBody: `client_id=openziti&grant_type=refresh_token&refresh_token=${token.body.refresh_token}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicClient('openziti') },
    });
    expect(refreshed.status).toBe(200);
    expect(claimsOf(refreshed.body.access_token).z_asid).toBe(claimsOf(access).z_asid);
  });
});
