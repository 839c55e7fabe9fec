import type { HttpResponse } from './https-client.ts';
import type { TestController } from './test-controller.ts';

export const M = '/edge/management/v1';

/** An auth policy body: password logins allowed, no lockout, the API's floor for passwords; `updb` overrides. */
export function authPolicyBody(
  name: string,
  updb: Record<string, unknown> = {},
  secondary: Record<string, unknown> = {},
) {
  return {
    name,
    primary: {
      cert: { allowed: true, allowExpiredCerts: false },
      extJwt: { allowed: false, allowedSigners: [] as string[] },
      updb: {
        allowed: true,
        lockoutDurationMinutes: 0,
        maxAttempts: 0,
        minPasswordLength: 5,
        requireMixedCase: false,
        requireNumberChar: false,
        requireSpecialChar: false,
        ...updb,
      },
    },
    secondary: { requireExtJwtSigner: null, requireTotp: false, ...secondary },
  };
}

/** Management calls as one admin, and the fixtures the API tests build on (getters: both exist only after setup). */
export function managementFixtures(controller: () => TestController, admin: () => string) {
  const call = (method: string, path: string, body?: unknown, token = admin()): Promise<HttpResponse> =>
    controller().call(method, `${M}${path}`, { token, ...(body !== undefined ? { body } : {}) });

  const createdId = async (path: string, body: unknown): Promise<string> => {
    const response = await call('POST', path, body);
    if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${response.text}`);
    return response.body.data.id as string;
  };

  return {
    call,
    createdId,
    createPolicy: (body: unknown) => createdId('/auth-policies', body),
    /** An identity under a policy, with a password login. */
    userUnder: async (authPolicyId: string, name: string, password = `${name}-Passw0rd!`) => {
      const identityId = await createdId('/identities', { name, type: 'User', isAdmin: false, authPolicyId });
      const authenticatorId = await createdId('/authenticators', {
        identityId,
        method: 'updb',
        username: name,
        password,
      });
      return { identityId, authenticatorId, username: name, password };
    },
    login: (username: string, password: string) =>
      controller().call('POST', `${M}/authenticate?method=password`, { body: { username, password } }),
    /** A password login on the client API, as an SDK logs in: only such sessions reach routers. */
    clientLogin: (username: string, password: string) =>
      controller().call('POST', '/edge/client/v1/authenticate?method=password', { body: { username, password } }),
  };
}
