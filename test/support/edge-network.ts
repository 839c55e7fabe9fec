import type { HttpResponse } from './https-client.ts';
import { claimsOf, oidcPasswordTokens } from './oidc-client.ts';
import type { TestController } from './test-controller.ts';

type Call = (method: string, path: string, body?: unknown) => Promise<HttpResponse>;

const C = '/edge/client/v1';
let counter = 0;
const unique = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`;

/**
 * A logged-in SDK identity: its id, its API session (id and token: the `zt-session` token, or an OIDC login's access
 * token), and a session of the given type for the service.
 */
export interface EdgeClient {
  readonly identityId: string;
  readonly name: string;
  readonly apiSessionToken: string;
  readonly apiSessionId: string;
  /** A session of the network's service (`POST /sessions`): its id and JWT token. */
  session(type: 'Dial' | 'Bind'): Promise<{ id: string; token: string }>;
}

/**
 * A small network around one edge router, with its own role attributes so tests do not see each other's: a service,
 * a hosting identity that may Bind it and a dialing identity that may Dial it (both password logins, logged in), and
 * the edge router and service edge router policies that let both reach the service through `routerId`. `service`
 * adds fields to the service's creation (`encryptionRequired`, as a recorded network had it).
 */
export async function edgeNetwork(
  controller: () => TestController,
  call: Call,
  routerId: string,
  service: Record<string, unknown> = {},
) {
  const tag = unique('edge');
  const createdId = async (path: string, body: unknown): Promise<string> => {
    const created = await call('POST', path, body);
    if (created.status !== 201) throw new Error(`POST ${path}: ${created.status} ${created.text}`);
    return created.body.data.id as string;
  };
  const router = await call('GET', `/edge-routers/${routerId}`);
  const routerAttributes = (router.body.data.roleAttributes as string[] | null) ?? [];
  await call('PATCH', `/edge-routers/${routerId}`, { roleAttributes: [...routerAttributes, `${tag}-er`] });
  const serviceId = await createdId('/services', {
    name: unique('edge-svc'),
    roleAttributes: [`${tag}-svc`],
    ...service,
  });
  for (const type of ['Dial', 'Bind'] as const) {
    await createdId('/service-policies', {
      name: unique(`edge-${type.toLowerCase()}`),
      semantic: 'AnyOf',
      type,
      identityRoles: [`#${tag}-${type === 'Dial' ? 'dialers' : 'hosts'}`],
      serviceRoles: [`#${tag}-svc`],
    });
  }
  await createdId('/edge-router-policies', {
    name: unique('edge-erp'),
    semantic: 'AnyOf',
    identityRoles: [`#${tag}-dialers`, `#${tag}-hosts`],
    edgeRouterRoles: [`#${tag}-er`],
  });
  await createdId('/service-edge-router-policies', {
    name: unique('edge-serp'),
    semantic: 'AnyOf',
    serviceRoles: [`#${tag}-svc`],
    edgeRouterRoles: [`#${tag}-er`],
  });

  /** An identity of the role, logged in as `POST /authenticate` does, or through the OIDC provider (`oidc`). */
  const client = async (role: 'dialers' | 'hosts', login: 'legacy' | 'oidc' = 'legacy'): Promise<EdgeClient> => {
    const name = unique(`edge-${role}`);
    const password = `${name}-Pw1!`;
    const identityId = await createdId('/identities', {
      name,
      type: 'Device',
      isAdmin: false,
      roleAttributes: [`${tag}-${role}`],
    });
    await createdId('/authenticators', { identityId, method: 'updb', username: name, password });
    const { apiSessionToken, apiSessionId } = await loggedIn(name, password, login);
    const credential =
      login === 'oidc' ? { headers: { authorization: `Bearer ${apiSessionToken}` } } : { token: apiSessionToken };
    return {
      identityId,
      name,
      apiSessionToken,
      apiSessionId,
      session: async (type) => {
        const made = await controller().call('POST', `${C}/sessions`, { ...credential, body: { serviceId, type } });
        if (made.status !== 201) throw new Error(`${type} session of ${name}: ${made.status} ${made.text}`);
        return { id: made.body.data.id as string, token: made.body.data.token as string };
      },
    };
  };
  const loggedIn = async (name: string, password: string, login: 'legacy' | 'oidc') => {
    if (login === 'oidc') {
      const { accessToken } = await oidcPasswordTokens(controller(), name, password);
      return { apiSessionToken: accessToken, apiSessionId: String(claimsOf(accessToken).z_asid) };
    }
    const answer = await controller().call('POST', `${C}/authenticate?method=password`, {
      body: { username: name, password },
    });
    if (answer.status !== 200) throw new Error(`login of ${name}: ${answer.status} ${answer.text}`);
    return { apiSessionToken: answer.body.data.token as string, apiSessionId: answer.body.data.id as string };
  };
  return { tag, serviceId, client, host: await client('hosts'), dialer: await client('dialers') };
}
