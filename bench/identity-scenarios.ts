import type { BenchClient, BenchResponse } from './bench-client.ts';

export const BASE = '/edge/management/v1';
export const CLIENT = '/edge/client/v1';

/**
 * The body an OpenZiti SDK logs in with (the C SDK under ziti-edge-tunnel): what it is and where it runs, and the config
 * types it wants (`authenticate` in the client API's specification: `configTypes`, `envInfo`, `sdkInfo`).
 */
export const SDK_LOGIN_BODY = {
  configTypes: ['ziti-tunneler-client.v1', 'intercept.v1', 'ziti-tunneler-server.v1', 'host.v1', 'host.v2'],
  envInfo: {
    arch: 'x86_64',
    os: 'Linux',
    osRelease: '6.1.0-28-amd64',
    osVersion: '#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)',
    hostname: 'bench-laptop-01',
    domain: 'corp.example.com',
  },
  sdkInfo: {
    type: 'ziti-sdk-c',
    version: '1.18.2',
    revision: '4f2a9c1',
    branch: 'HEAD',
    appId: 'ziti-edge-tunnel',
    appVersion: 'v1.18.2',
  },
} as const;

/** One measured operation: a request (checked for its expected status) and a label read after the runs. */
export interface Scenario {
  readonly label: string;
  /** Changes what it measures against (adds a session or an identity), so it must not run outside its row. */
  readonly writes?: boolean;
  run(): Promise<void>;
  /** Set-up before each run, neither timed nor counted (see `measureOperation`). */
  prepare?(): Promise<void>;
}

export interface ScenarioContext {
  readonly client: BenchClient;
  readonly token: string;
  readonly adminUsername: string;
  readonly adminPassword: string;
  readonly adminId: string;
  /** A seeded identity to retrieve, and the name that identity has. */
  readonly sampleId: string;
  readonly sampleName: string;
  /** The identities in the table when measuring starts: sets the deep offset. */
  readonly size: number;
}

export function expectStatus(response: BenchResponse, status: number, what: string): BenchResponse {
  if (response.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${response.status} ${response.text.slice(0, 500)}`);
  }
  return response;
}

/** Logs in with a password on the management API and returns the session token. */
export async function login(client: BenchClient, username: string, password: string): Promise<string> {
  const response = await client.call('POST', `${BASE}/authenticate?method=password`, { body: { username, password } });
  return (expectStatus(response, 200, 'login').body as { data: { token: string } }).data.token;
}

function totalCountOf(response: BenchResponse): number | undefined {
  const meta = (response.body as { meta?: { pagination?: { totalCount?: number } } } | undefined)?.meta;
  return meta?.pagination?.totalCount;
}

/** A list request whose label reports how many entities its last run matched. */
export function listScenario(
  context: Pick<ScenarioContext, 'client' | 'token'>,
  label: string,
  query: Record<string, string>,
  collectionPath = '/identities',
): Scenario {
  const path = `${BASE}${collectionPath}?${new URLSearchParams(query)}`;
  let matched: number | undefined;
  return {
    get label() {
      return matched === undefined ? label : `${label} (${matched.toLocaleString('en-US')} match)`;
    },
    run: async () => {
      const response = expectStatus(await context.client.call('GET', path, { token: context.token }), 200, label);
      matched = totalCountOf(response);
    },
  };
}

/** A password login on the client API with the body an SDK sends (`SDK_LOGIN_BODY`). */
export function sdkLoginScenario(client: BenchClient, username: string, password: string): Scenario {
  return {
    label: "password login, client API, with the SDK's `envInfo`/`sdkInfo`",
    writes: true,
    run: async () => {
      const body = { ...SDK_LOGIN_BODY, username, password };
      expectStatus(await client.call('POST', `${CLIENT}/authenticate?method=password`, { body }), 200, 'sdk login');
    },
  };
}

/** The plainest authenticated request: the caller's own API session, on the client API. */
export function currentApiSessionScenario(client: BenchClient, token: string): Scenario {
  return {
    label: 'authenticated request, `GET /current-api-session`',
    run: async () => {
      expectStatus(await client.call('GET', `${CLIENT}/current-api-session`, { token }), 200, 'current api session');
    },
  };
}

/**
 * The identity operations measured at each table size. The create scenario adds an identity per run (unique names
 * per size), which the caller accounts for when topping the table up to the next size.
 */
export function identityScenarios(context: ScenarioContext): Scenario[] {
  const { client, token } = context;
  const deepOffset = Math.round(context.size * 0.9);
  const nameNeedle = context.sampleName.slice(-6);
  let created = 0;
  return [
    {
      label: 'password login',
      writes: true,
      run: async () => {
        const body = { username: context.adminUsername, password: context.adminPassword };
        expectStatus(await client.call('POST', `${BASE}/authenticate?method=password`, { body }), 200, 'login');
      },
    },
    sdkLoginScenario(client, context.adminUsername, context.adminPassword),
    currentApiSessionScenario(client, token),
    {
      label: 'retrieve identity',
      run: async () => {
        expectStatus(await client.call('GET', `${BASE}/identities/${context.sampleId}`, { token }), 200, 'detail');
      },
    },
    {
      label: 'retrieve identity with many API sessions (the admin)',
      run: async () => {
        expectStatus(await client.call('GET', `${BASE}/identities/${context.adminId}`, { token }), 200, 'detail');
      },
    },
    listScenario(context, 'list, no filter', {}),
    listScenario(context, `list, filter \`name contains "${nameNeedle}"\``, {
      filter: `name contains "${nameNeedle}"`,
    }),
    listScenario(context, `list, filter \`name = "${context.sampleName}"\``, {
      filter: `name = "${context.sampleName}"`,
    }),
    listScenario(context, 'list, `roleFilter=#sales&roleSemantic=AllOf`', {
      roleFilter: '#sales',
      roleSemantic: 'AllOf',
    }),
    listScenario(context, 'list, `sort=name desc`', { sort: 'name desc' }),
    listScenario(context, `list, \`offset=${deepOffset}\``, { offset: String(deepOffset) }),
    {
      label: 'create identity',
      writes: true,
      run: async () => {
        created++;
        const body = {
          name: `bench-created-${context.size}-${String(created).padStart(5, '0')}`,
          type: 'User',
          isAdmin: false,
          roleAttributes: ['eng', 'emea'],
        };
        expectStatus(await client.call('POST', `${BASE}/identities`, { body, token }), 201, 'create');
      },
    },
  ];
}
