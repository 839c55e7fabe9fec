import { createDeps } from '#functions/create-deps.ts';
import { edgeRouterPolicyApi } from '#functions/policies/edge-router-policy-api.ts';
import { serviceEdgeRouterPolicyApi } from '#functions/policies/service-edge-router-policy-api.ts';
import { servicePolicyApi } from '#functions/policies/service-policy-api.ts';
import { edgeRouterApi } from '#functions/routers/edge-router-api.ts';
import { serviceApi } from '#functions/services/service-api.ts';
import { ensureTable } from '#local/create-table.ts';
import { startLocalServer } from '#local/local-server.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { createLogger } from '#shared/log/logger.ts';
import { servicesOfIdentity } from '#shared/policy/access.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { orderedIds } from '#shared/store/index-queries.ts';
import type { SessionBenchOptions } from './api-session-bench.ts';
import { type BenchClient, createBenchClient } from './bench-client.ts';
import { benchConfig } from './bench-config.ts';
import { countDynamoDbRequests, type DynamoDbRequestCounter } from './count-dynamodb-requests.ts';
import { BASE, expectStatus, login, type Scenario } from './identity-scenarios.ts';
import { measureOperation, type OperationFigures } from './measure-operation.ts';
import { type SeededCollection, seedEntities, seededEdgeRouters, seededServices } from './seed-entities.ts';
import { paddedName, ROLE_ATTRIBUTES, seedIdentities } from './seed-identities.ts';
import { seedIdentitiesInBulk } from './seed-identities-in-bulk.ts';

/** The network of the policy scenario. */
export const POLICY_NETWORK = {
  identities: 10_000,
  services: 1_000,
  edgeRouters: 200,
  servicePolicies: 300,
  edgeRouterPolicies: 150,
  serviceEdgeRouterPolicies: 50,
} as const;
/** p50 targets, locally. */
export const POLICY_TARGETS_MS = { clientServices: 60, createSession: 60 } as const;

const CLIENT = '/edge/client/v1';
/** Identities seeded one create at a time (filling the role catalog as creates do) before the bulk seeding. */
const SEEDED_ONE_BY_ONE = 200;
/** The entities `@id` roles are drawn from: the first of each type in id order. */
const NAMED_POOL = 200;

/** The same as the API-session bench's: a table of its own on the bench's DynamoDB Local. */
export type PolicyBenchOptions = SessionBenchOptions;

export interface PolicyRow {
  readonly label: string;
  /** The figures, or why the operation could not be measured. */
  readonly figures: OperationFigures | string;
  readonly targetMs?: number;
}

/** Ids of the entities `@id` roles name. */
interface NamedPools {
  readonly identities: readonly string[];
  readonly services: readonly string[];
  readonly edgeRouters: readonly string[];
}

/**
 * The roles of one side of the `index`-th policy: one in twenty `#all`, one in four one to three `@ids`, else one or
 * two attributes (AllOf policies with two select the holders of both).
 */
function rolesFor(index: number, side: number, named: readonly string[]): string[] {
  const pick = (offset: number) => named[(index * 13 + side * 7 + offset * 31) % named.length];
  if ((index + side) % 20 === 0) return ['#all'];
  if ((index + side) % 4 === 1) {
    return [...new Set(Array.from({ length: 1 + (index % 3) }, (_, i) => `@${pick(i)}`))];
  }
  const first = ROLE_ATTRIBUTES[(index + side) % ROLE_ATTRIBUTES.length];
  const second = ROLE_ATTRIBUTES[(index * 3 + side + 1) % ROLE_ATTRIBUTES.length];
  return index % 3 === 0 && first !== second ? [`#${first}`, `#${second}`] : [`#${first}`];
}

const semanticFor = (index: number) => (index % 2 === 0 ? 'AnyOf' : 'AllOf') as 'AnyOf' | 'AllOf';

/** The create input of an entity API. */
type InputOf<A extends { create?: (input: never, context: never) => unknown }> = Parameters<
  NonNullable<A['create']>
>[0];

function policyCollections(pools: NamedPools) {
  const servicePolicies: SeededCollection<InputOf<typeof servicePolicyApi>> = {
    path: '/service-policies',
    plural: 'service policies',
    createOperation: 'createServicePolicy',
    seededName: (index) => paddedName('bench-service-policy', index),
    seededInput: (index) => ({
      name: paddedName('bench-service-policy', index),
      semantic: semanticFor(index),
      type: index % 3 === 2 ? ('Bind' as const) : ('Dial' as const),
      identityRoles: rolesFor(index, 0, pools.identities),
      serviceRoles: rolesFor(index, 1, pools.services),
      postureCheckRoles: [],
    }),
  };
  const edgeRouterPolicies: SeededCollection<InputOf<typeof edgeRouterPolicyApi>> = {
    path: '/edge-router-policies',
    plural: 'edge router policies',
    createOperation: 'createEdgeRouterPolicy',
    seededName: (index) => paddedName('bench-edge-router-policy', index),
    seededInput: (index) => ({
      name: paddedName('bench-edge-router-policy', index),
      semantic: semanticFor(index),
      identityRoles: rolesFor(index, 0, pools.identities),
      edgeRouterRoles: rolesFor(index, 1, pools.edgeRouters),
    }),
  };
  const serviceEdgeRouterPolicies: SeededCollection<InputOf<typeof serviceEdgeRouterPolicyApi>> = {
    path: '/service-edge-router-policies',
    plural: 'service edge router policies',
    createOperation: 'createServiceEdgeRouterPolicy',
    seededName: (index) => paddedName('bench-service-edge-router-policy', index),
    seededInput: (index) => ({
      name: paddedName('bench-service-edge-router-policy', index),
      semantic: semanticFor(index),
      serviceRoles: rolesFor(index, 0, pools.services),
      edgeRouterRoles: rolesFor(index, 1, pools.edgeRouters),
    }),
  };
  return { servicePolicies, edgeRouterPolicies, serviceEdgeRouterPolicies };
}

async function seedNetwork(deps: Deps, progress: (message: string) => void): Promise<void> {
  const started = performance.now();
  await seedIdentities(deps, 0, SEEDED_ONE_BY_ONE);
  await seedIdentitiesInBulk(deps, SEEDED_ONE_BY_ONE, POLICY_NETWORK.identities);
  await seedEntities(deps, serviceApi, seededServices, 0, POLICY_NETWORK.services);
  await seedEntities(deps, edgeRouterApi, seededEdgeRouters, 0, POLICY_NETWORK.edgeRouters);
  const pools: NamedPools = {
    identities: await orderedIds(deps.store, 'identities', 'id', 'asc', 0, NAMED_POOL),
    services: await orderedIds(deps.store, 'services', 'id', 'asc', 0, NAMED_POOL),
    edgeRouters: await orderedIds(deps.store, 'edge-routers', 'id', 'asc', 0, NAMED_POOL),
  };
  const collections = policyCollections(pools);
  await seedEntities(deps, servicePolicyApi, collections.servicePolicies, 0, POLICY_NETWORK.servicePolicies);
  await seedEntities(deps, edgeRouterPolicyApi, collections.edgeRouterPolicies, 0, POLICY_NETWORK.edgeRouterPolicies);
  await seedEntities(
    deps,
    serviceEdgeRouterPolicyApi,
    collections.serviceEdgeRouterPolicies,
    0,
    POLICY_NETWORK.serviceEdgeRouterPolicies,
  );
  progress(`seeded the policy network in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** A non-admin identity with a password, selected by attributes many policies name. */
async function clientIdentity(client: BenchClient, token: string): Promise<{ id: string; password: string }> {
  const password = 'Bench-client-passw0rd!';
  const created = await client.call('POST', `${BASE}/identities`, {
    token,
    body: { name: 'bench-policy-client', type: 'User', isAdmin: false, roleAttributes: ['eng', 'emea'] },
  });
  const id = (expectStatus(created, 201, 'create the client identity').body as { data: { id: string } }).data.id;
  expectStatus(
    await client.call('POST', `${BASE}/authenticators`, {
      token,
      body: { identityId: id, method: 'updb', username: 'bench-policy-client', password },
    }),
    201,
    'create the client authenticator',
  );
  return { id, password };
}

function scenario(label: string, run: () => Promise<void>): Scenario {
  return { label, run };
}

/**
 * The policy scenario on a table of its own: 10,000 identities, 1,000 services, 200 edge routers and 500
 * policies, then the reads and writes that policies make expensive, with their DynamoDB requests and waves.
 */
export async function policyBench(options: PolicyBenchOptions): Promise<PolicyRow[]> {
  const config = benchConfig('bench-policies', options.dynamoDbEndpoint);
  const deps: Deps = { ...createDeps(config), logger: createLogger({}, { write: () => undefined }) };
  const counter: DynamoDbRequestCounter = countDynamoDbRequests(deps.store.db);
  await ensureTable(deps.store.db, config.tableName);
  await bootstrap(deps, { adminUsername: options.adminUsername, adminPassword: options.adminPassword });
  const server = await startLocalServer({ deps, tls: options.tls, port: 0 });
  const client = createBenchClient(`https://127.0.0.1:${server.port}`, options.tls.cert);
  try {
    options.progress('seeding the policy network');
    await seedNetwork(deps, options.progress);
    const admin = await login(client, options.adminUsername, options.adminPassword);
    const user = await clientIdentity(client, admin);
    const clientLogin = async () => {
      const response = await client.call('POST', `${CLIENT}/authenticate?method=password`, {
        body: { username: 'bench-policy-client', password: user.password },
      });
      return (expectStatus(response, 200, 'client login').body as { data: { token: string } }).data.token;
    };
    const userToken = await clientLogin();
    const grants = await servicesOfIdentity(deps.store, { id: user.id, attributes: ['eng', 'emea'] });
    const dialable = [...grants].find(([, grant]) => grant.permissions.has('Dial'))?.[0];
    const widelyReached = [...grants.keys()][0];
    options.progress(`the client may reach ${grants.size} services`);
    let policyIndex = 0;
    let toggle = false;

    const scenarios: (Scenario & { targetMs?: number })[] = [
      scenario('client login (password)', async () => {
        await clientLogin();
      }),
      {
        ...scenario(`client \`GET /services?limit=500\` (${grants.size} reachable)`, async () => {
          expectStatus(
            await client.call('GET', `${CLIENT}/services?limit=500`, { token: userToken }),
            200,
            'client services',
          );
        }),
        targetMs: POLICY_TARGETS_MS.clientServices,
      },
      {
        ...scenario('client `POST /sessions` Dial', async () => {
          if (!dialable) throw new Error('the client may dial nothing');
          expectStatus(
            await client.call('POST', `${CLIENT}/sessions`, {
              token: userToken,
              body: { serviceId: dialable, type: 'Dial' },
            }),
            201,
            'create session',
          );
        }),
        targetMs: POLICY_TARGETS_MS.createSession,
      },
      scenario('`GET /identities/{id}/services`', async () => {
        expectStatus(
          await client.call('GET', `${BASE}/identities/${user.id}/services?limit=100`, { token: admin }),
          200,
          'identity services',
        );
      }),
      scenario('`GET /services/{id}/identities`', async () => {
        expectStatus(
          await client.call('GET', `${BASE}/services/${widelyReached}/identities?limit=100`, { token: admin }),
          200,
          'service identities',
        );
      }),
      scenario('create a `#all` service policy', async () => {
        policyIndex++;
        expectStatus(
          await client.call('POST', `${BASE}/service-policies`, {
            token: admin,
            body: {
              name: `bench-all-policy-${policyIndex}`,
              semantic: 'AnyOf',
              type: 'Dial',
              identityRoles: ['#all'],
              serviceRoles: ['#sales'],
            },
          }),
          201,
          'create policy',
        );
      }),
      scenario("patch one identity's role attributes", async () => {
        toggle = !toggle;
        expectStatus(
          await client.call('PATCH', `${BASE}/identities/${user.id}`, {
            token: admin,
            body: { roleAttributes: toggle ? ['eng', 'emea', 'ops'] : ['eng', 'emea'] },
          }),
          200,
          'patch identity',
        );
      }),
    ];
    const rows: PolicyRow[] = [];
    for (const { label, run, targetMs } of scenarios) {
      options.progress(`  ${label}`);
      let figures: OperationFigures | string;
      try {
        figures = await measureOperation(run, counter, options.measure);
      } catch (error) {
        figures = (error as Error).message.slice(0, 160);
      }
      rows.push({ label, figures, ...(targetMs === undefined ? {} : { targetMs }) });
    }
    return rows;
  } finally {
    client.close();
    await server.close();
    deps.store.db.destroy();
  }
}
