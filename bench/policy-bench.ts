import { edgeRouterPolicyApi } from '#functions/policies/edge-router-policy-api.ts';
import { serviceEdgeRouterPolicyApi } from '#functions/policies/service-edge-router-policy-api.ts';
import { servicePolicyApi } from '#functions/policies/service-policy-api.ts';
import { edgeRouterApi } from '#functions/routers/edge-router-api.ts';
import { serviceApi } from '#functions/services/service-api.ts';
import { servicesOfIdentity } from '#shared/policy/access.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { orderedIds } from '#shared/store/index-queries.ts';
import type { SessionBenchOptions } from './api-session-bench.ts';
import type { BenchClient } from './bench-client.ts';
import { startBenchController } from './bench-controller.ts';
import type { BenchMeter } from './bench-meter.ts';
import { BASE, CLIENT, expectStatus, login, type Scenario, SDK_LOGIN_BODY } from './identity-scenarios.ts';
import { measureOperation, type OperationFigures } from './measure-operation.ts';
import { busiestPartitions, type PartitionShare } from './partition-writes.ts';
import { type SeededCollection, seedEntities, seededEdgeRouters, seededServices } from './seed-entities.ts';
import { paddedName, ROLE_ATTRIBUTES, seedIdentities } from './seed-identities.ts';
import { seedIdentitiesInBulk } from './seed-identities-in-bulk.ts';

/** The network of the policy scenario (its policies: the middle of `POLICY_STEPS`). */
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
/** The policy counts the client's service list and session create are measured at, in the network's proportions. */
export const POLICY_STEPS = [50, 500, 2_000] as const;

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

/** How many policies of each kind a total of `total` is, in the network's proportions (6 : 3 : 1). */
export function policyCounts(total: number) {
  const all =
    POLICY_NETWORK.servicePolicies + POLICY_NETWORK.edgeRouterPolicies + POLICY_NETWORK.serviceEdgeRouterPolicies;
  return {
    servicePolicies: Math.round((total * POLICY_NETWORK.servicePolicies) / all),
    edgeRouterPolicies: Math.round((total * POLICY_NETWORK.edgeRouterPolicies) / all),
    serviceEdgeRouterPolicies: Math.round((total * POLICY_NETWORK.serviceEdgeRouterPolicies) / all),
  };
}

/** Identities, services and edge routers; the policies follow step by step (`seedPolicies`). */
async function seedNetwork(deps: Deps): Promise<ReturnType<typeof policyCollections>> {
  await seedIdentities(deps, 0, SEEDED_ONE_BY_ONE);
  await seedIdentitiesInBulk(deps, SEEDED_ONE_BY_ONE, POLICY_NETWORK.identities);
  await seedEntities(deps, serviceApi, seededServices, 0, POLICY_NETWORK.services);
  await seedEntities(deps, edgeRouterApi, seededEdgeRouters, 0, POLICY_NETWORK.edgeRouters);
  const pools: NamedPools = {
    identities: await orderedIds(deps.store, 'identities', 'id', 'asc', 0, NAMED_POOL),
    services: await orderedIds(deps.store, 'services', 'id', 'asc', 0, NAMED_POOL),
    edgeRouters: await orderedIds(deps.store, 'edge-routers', 'id', 'asc', 0, NAMED_POOL),
  };
  return policyCollections(pools);
}

/** Seeds policies from `from` in all to `to` in all, each kind in its share (the same policies at every step). */
async function seedPolicies(
  deps: Deps,
  collections: ReturnType<typeof policyCollections>,
  from: number,
  to: number,
): Promise<void> {
  const before = policyCounts(from);
  const after = policyCounts(to);
  await seedEntities(
    deps,
    servicePolicyApi,
    collections.servicePolicies,
    before.servicePolicies,
    after.servicePolicies,
  );
  await seedEntities(
    deps,
    edgeRouterPolicyApi,
    collections.edgeRouterPolicies,
    before.edgeRouterPolicies,
    after.edgeRouterPolicies,
  );
  await seedEntities(
    deps,
    serviceEdgeRouterPolicyApi,
    collections.serviceEdgeRouterPolicies,
    before.serviceEdgeRouterPolicies,
    after.serviceEdgeRouterPolicies,
  );
}

/** A non-admin identity with a password, selected by the attributes given (many policies name `eng` and `emea`). */
async function clientIdentity(
  client: BenchClient,
  token: string,
  name: string,
  roleAttributes: readonly string[],
): Promise<{ id: string; name: string; password: string; roleAttributes: readonly string[] }> {
  const password = 'Bench-client-passw0rd!';
  const created = await client.call('POST', `${BASE}/identities`, {
    token,
    body: { name, type: 'User', isAdmin: false, roleAttributes },
  });
  const id = (expectStatus(created, 201, 'create a client identity').body as { data: { id: string } }).data.id;
  expectStatus(
    await client.call('POST', `${BASE}/authenticators`, {
      token,
      body: { identityId: id, method: 'updb', username: name, password },
    }),
    201,
    'create a client authenticator',
  );
  return { id, name, password, roleAttributes };
}

function scenario(label: string, run: () => Promise<void>): Scenario {
  return { label, run };
}

/** One operation measured at one policy count. */
export interface PolicyStepRow {
  readonly policies: number;
  readonly label: string;
  readonly figures: OperationFigures | string;
}

/** The write units of a mixed workload of authenticated requests, by partition (table and index partition keys). */
export interface PartitionHeat {
  readonly requests: number;
  readonly clients: number;
  readonly totalUnits: number;
  readonly partitions: readonly PartitionShare[];
  /** The busiest partition of the table and of each index. */
  readonly busiestByTarget: readonly PartitionShare[];
  readonly requestsByLabel: ReadonlyMap<string, number>;
}

export interface PolicyBenchFigures {
  /** The operations policies make expensive, at the middle step (500 policies). */
  readonly rows: readonly PolicyRow[];
  /** The client's service list and a fresh session at each of `POLICY_STEPS`. */
  readonly steps: readonly PolicyStepRow[];
  readonly heat: PartitionHeat | string;
}

/** Measures one row, or says why it could not be measured. */
async function measured(
  meter: BenchMeter,
  options: PolicyBenchOptions,
  { run, prepare }: Pick<Scenario, 'run' | 'prepare'>,
): Promise<OperationFigures | string> {
  try {
    return await measureOperation(run, meter, options.measure, prepare);
  } catch (error) {
    return (error as Error).message.slice(0, 160);
  }
}

/** Candidates tried for a usable Dial (a policy grants it and both sides share an edge router), per step. */
const DIAL_CANDIDATES = 200;
/** Client identities of the mixed workload, and its rounds. */
const HEAT_CLIENTS = 20;
const HEAT_ROUNDS = 10;
/** How far apart the heat workload's rounds are, on the controller's clock: a client polling once a minute. */
const HEAT_ROUND_MS = 61_000;

/**
 * The policy scenario on a table of its own: 10,000 identities, 1,000 services and 200 edge routers, with 50,
 * 500 and then 2,000 policies: at each, the client's service list (the default page of 10) and a fresh Dial session;
 * at 500 the reads and writes that policies make expensive; at the end the partitions a mixed workload of
 * authenticated requests writes to.
 */
export async function policyBench(options: PolicyBenchOptions): Promise<PolicyBenchFigures> {
  // The heat workload moves the controller's clock a minute a round (see `partitionHeat`).
  const bench = await startBenchController('bench-policies', options);
  const { deps, meter, client } = bench;
  try {
    options.progress('seeding 10,000 identities, 1,000 services and 200 edge routers');
    const seeding = performance.now();
    const collections = await meter.uncounted(() => seedNetwork(deps));
    options.progress(`seeded in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
    const admin = await login(client, options.adminUsername, options.adminPassword);
    const user = await clientIdentity(client, admin, 'bench-policy-client', ['eng', 'emea']);
    const clientLogin = async (who: { name: string; password: string } = user) => {
      const response = await client.call('POST', `${CLIENT}/authenticate?method=password`, {
        body: { username: who.name, password: who.password },
      });
      return (expectStatus(response, 200, 'client login').body as { data: { token: string } }).data.token;
    };
    let userToken = await clientLogin();

    /** Services the client may dial (a Dial session is created for them), tried on a throwaway API session. */
    const usableDials = async () => {
      const grants = await servicesOfIdentity(deps.store, { id: user.id, attributes: [...user.roleAttributes] });
      const candidates = [...grants].filter(([, grant]) => grant.permissions.has('Dial')).map(([id]) => id);
      const probe = await clientLogin();
      const usable: string[] = [];
      for (const serviceId of candidates.slice(0, DIAL_CANDIDATES)) {
        const response = await client.call('POST', `${CLIENT}/sessions`, {
          token: probe,
          body: { serviceId, type: 'Dial' },
        });
        if (response.status === 201) usable.push(serviceId);
      }
      return { reachable: grants.size, usable };
    };
    /** Each run dials a service this API session has no session for; when all are used, the client logs in again. */
    const freshDial = (usable: readonly string[]) => {
      let next = usable.length;
      let serviceId = '';
      return {
        prepare: async () => {
          if (next >= usable.length) {
            userToken = await clientLogin();
            next = 0;
          }
          serviceId = usable[next++] ?? '';
        },
        run: async () => {
          expectStatus(
            await client.call('POST', `${CLIENT}/sessions`, { token: userToken, body: { serviceId, type: 'Dial' } }),
            201,
            'create a fresh session',
          );
        },
      };
    };

    const rows: PolicyRow[] = [];
    const steps: PolicyStepRow[] = [];
    let seededPolicies = 0;
    for (const policies of POLICY_STEPS) {
      options.progress(`seeding policies to ${policies.toLocaleString('en-US')}`);
      await meter.uncounted(() => seedPolicies(deps, collections, seededPolicies, policies));
      seededPolicies = policies;
      const { reachable, usable } = await meter.uncounted(usableDials);
      options.progress(
        `  the client reaches ${reachable} services, ${usable.length} of the first ${DIAL_CANDIDATES} dialable`,
      );
      const stepScenarios: Scenario[] = [
        scenario(`client \`GET /services\` (default page of 10; ${reachable} reachable)`, async () => {
          expectStatus(await client.call('GET', `${CLIENT}/services`, { token: userToken }), 200, 'client services');
        }),
        {
          label: 'client `POST /sessions`, a fresh Dial',
          writes: true,
          ...(usable.length > 0
            ? freshDial(usable)
            : {
                run: async () => {
                  throw new Error('the client may dial nothing');
                },
              }),
        },
      ];
      for (const { label, run, prepare } of stepScenarios) {
        options.progress(`  ${policies} policies: ${label}`);
        steps.push({
          policies,
          label,
          figures: await measured(meter, options, { run, ...(prepare ? { prepare } : {}) }),
        });
      }
      if (
        policies ===
        POLICY_NETWORK.servicePolicies + POLICY_NETWORK.edgeRouterPolicies + POLICY_NETWORK.serviceEdgeRouterPolicies
      ) {
        rows.push(...(await middleStepRows(meter, options, client, { admin, user, userToken, usable, reachable })));
      }
    }
    options.progress('a mixed workload of authenticated requests, for partition heat');
    const heat = await partitionHeat(
      meter,
      client,
      admin,
      async (index) =>
        clientIdentity(client, admin, `bench-heat-client-${index}`, [ROLE_ATTRIBUTES[index % ROLE_ATTRIBUTES.length]!]),
      bench.advanceClock,
    ).catch((error: unknown) => (error as Error).message.slice(0, 160));
    return { rows, steps, heat };
  } finally {
    await bench.close();
  }
}

/**
 * The operations policies make expensive, at 500 policies: as before, with the client's list of 500 services and a
 * session the client asks for again (the same service: the stored session comes back, nothing is written). The
 * `#all` policies the create row adds are deleted afterwards, so the next step has its own count.
 */
async function middleStepRows(
  meter: BenchMeter,
  options: PolicyBenchOptions,
  client: BenchClient,
  context: {
    admin: string;
    user: { id: string };
    userToken: string;
    usable: readonly string[];
    reachable: number;
  },
): Promise<PolicyRow[]> {
  const { admin, user, userToken } = context;
  const dialable = context.usable[0];
  const widelyReached = context.usable[1] ?? dialable;
  const created: string[] = [];
  let toggle = false;
  const scenarios: (Scenario & { targetMs?: number })[] = [
    scenario('client login (password)', async () => {
      expectStatus(
        await client.call('POST', `${CLIENT}/authenticate?method=password`, {
          body: { username: 'bench-policy-client', password: 'Bench-client-passw0rd!' },
        }),
        200,
        'client login',
      );
    }),
    {
      ...scenario(`client \`GET /services?limit=500\` (${context.reachable} reachable)`, async () => {
        expectStatus(
          await client.call('GET', `${CLIENT}/services?limit=500`, { token: userToken }),
          200,
          'client services',
        );
      }),
      targetMs: POLICY_TARGETS_MS.clientServices,
    },
    {
      ...scenario('client `POST /sessions` Dial, asked again (the session exists)', async () => {
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
      const response = await client.call('POST', `${BASE}/service-policies`, {
        token: admin,
        body: {
          name: `bench-all-policy-${created.length + 1}`,
          semantic: 'AnyOf',
          type: 'Dial',
          identityRoles: ['#all'],
          serviceRoles: ['#sales'],
        },
      });
      created.push((expectStatus(response, 201, 'create policy').body as { data: { id: string } }).data.id);
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
    rows.push({
      label,
      figures: await measured(meter, options, { run }),
      ...(targetMs === undefined ? {} : { targetMs }),
    });
  }
  await meter.uncounted(async () => {
    for (const id of created) {
      expectStatus(await client.call('DELETE', `${BASE}/service-policies/${id}`, { token: admin }), 200, 'delete');
    }
    if (toggle) {
      await client.call('PATCH', `${BASE}/identities/${user.id}`, {
        token: admin,
        body: { roleAttributes: ['eng', 'emea'] },
      });
    }
  });
  return rows;
}

/**
 * Partition heat: `HEAT_CLIENTS` client identities (one role attribute each) log in and make rounds of authenticated
 * requests (their API session, their identity, their service list, one service, their edge routers) while the admin
 * lists identities; the write units each partition took, table and index partition keys alike. Each round comes a
 * minute after the one before (`advanceClock`): clients that poll once a minute, so every API session is refreshed
 * once a round (sessions are refreshed at most once a minute; back-to-back rounds would write nearly nothing).
 */
async function partitionHeat(
  meter: BenchMeter,
  client: BenchClient,
  admin: string,
  makeClient: (index: number) => Promise<{ name: string; password: string }>,
  advanceClock: (ms: number) => void,
): Promise<PartitionHeat> {
  const tokens = await meter.uncounted(async () => {
    const made: string[] = [];
    for (let i = 0; i < HEAT_CLIENTS; i++) {
      const who = await makeClient(i);
      const response = await client.call('POST', `${CLIENT}/authenticate?method=password`, {
        body: { ...SDK_LOGIN_BODY, username: who.name, password: who.password },
      });
      made.push((expectStatus(response, 200, 'heat client login').body as { data: { token: string } }).data.token);
    }
    return made;
  });
  const requestsByLabel = new Map<string, number>();
  const call = async (label: string, method: string, path: string, token: string) => {
    const response = await client.call(method, path, { token });
    if (response.status >= 300) throw new Error(`${label}: ${response.status} ${response.text.slice(0, 200)}`);
    requestsByLabel.set(label, (requestsByLabel.get(label) ?? 0) + 1);
    return response;
  };
  meter.dynamo.trackPartitions(true);
  await meter.settle();
  const before = meter.dynamo.partitionWrites();
  let requests = 0;
  try {
    for (let round = 0; round < HEAT_ROUNDS; round++) {
      advanceClock(HEAT_ROUND_MS);
      for (const token of tokens) {
        await call('GET /current-api-session', 'GET', `${CLIENT}/current-api-session`, token);
        await call('GET /current-identity', 'GET', `${CLIENT}/current-identity`, token);
        const services = await call('GET /services', 'GET', `${CLIENT}/services`, token);
        const first = (services.body as { data?: { id: string }[] } | undefined)?.data?.[0]?.id;
        if (first) await call('GET /services/{id}', 'GET', `${CLIENT}/services/${first}`, token);
        await call('GET /current-identity/edge-routers', 'GET', `${CLIENT}/current-identity/edge-routers`, token);
        requests += first ? 5 : 4;
      }
      await call('GET /identities (admin)', 'GET', `${BASE}/identities`, admin);
      requests++;
    }
    await meter.settle();
  } finally {
    meter.dynamo.trackPartitions(false);
  }
  const after = meter.dynamo.partitionWrites();
  const { total, partitions } = busiestPartitions(before, after, 10);
  const all = busiestPartitions(before, after, Number.MAX_SAFE_INTEGER).partitions;
  const busiestByTarget = [...new Set(all.map((entry) => entry.target))].flatMap(
    (target) => all.find((entry) => entry.target === target) ?? [],
  );
  return { requests, clients: tokens.length, totalUnits: total, partitions, busiestByTarget, requestsByLabel };
}
