import { servicePolicyApi } from '#functions/policies/service-policy-api.ts';
import { terminatorApi } from '#functions/routers/terminator-api.ts';
import { serviceApi } from '#functions/services/service-api.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import type { BaseDocument } from '#shared/entities/entity-definition.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { count } from '#shared/store/index-queries.ts';
import type { SessionBenchOptions } from './api-session-bench.ts';
import type { BenchClient } from './bench-client.ts';
import { startBenchController } from './bench-controller.ts';
import type { BenchMeter } from './bench-meter.ts';
import { BASE, expectStatus, login, type Scenario } from './identity-scenarios.ts';
import { measureOperation, type OperationFigures } from './measure-operation.ts';
import { type SeededCollection, seedEntities, seededServices } from './seed-entities.ts';
import { paddedName, ROLE_ATTRIBUTES, seededRoleAttributes } from './seed-identities.ts';
import { seedEntitiesInBulk } from './seed-identities-in-bulk.ts';

/** The entities of each type the creates and updates are measured among. */
export const ENTITY_SCALE_SIZES = [1_000, 10_000, 40_000] as const;
/** Seeded one create at a time first (their role attributes enter the role catalog as a create's would). */
const SEEDED_ONE_BY_ONE = 100;

/** One operation on one type at one size. */
export interface EntityScaleRow {
  readonly type: string;
  readonly size: number;
  readonly label: string;
  readonly figures: OperationFigures | string;
}

type InputOf<A extends { create?: (input: never, context: never) => unknown }> = Parameters<
  NonNullable<A['create']>
>[0];

/** Terminators of one service on one router, each its own address. */
function seededTerminators(serviceId: string, routerId: string): SeededCollection<InputOf<typeof terminatorApi>> {
  return {
    path: '/terminators',
    plural: 'terminators',
    createOperation: 'createTerminator',
    seededName: (index) => paddedName('bench-terminator', index),
    seededInput: (index) => ({
      service: serviceId,
      router: routerId,
      binding: 'transport',
      address: `tcp:${paddedName('bench-host', index)}.example.com:443`,
      cost: index % 10,
      precedence: index % 7 === 0 ? ('required' as const) : ('default' as const),
      tags: index % 3 === 0 ? { site: `site-${index % 11}` } : null,
    }),
  };
}

/** Service policies of one or two role attributes a side. */
const seededServicePolicies: SeededCollection<InputOf<typeof servicePolicyApi>> = {
  path: '/service-policies',
  plural: 'service policies',
  createOperation: 'createServicePolicy',
  seededName: (index) => paddedName('bench-scale-policy', index),
  seededInput: (index) => ({
    name: paddedName('bench-scale-policy', index),
    semantic: index % 2 === 0 ? ('AnyOf' as const) : ('AllOf' as const),
    type: index % 3 === 2 ? ('Bind' as const) : ('Dial' as const),
    identityRoles: seededRoleAttributes(index).map((attribute) => `#${attribute}`),
    serviceRoles: [`#${ROLE_ATTRIBUTES[(index * 3 + 1) % ROLE_ATTRIBUTES.length]}`],
    postureCheckRoles: [],
  }),
};

interface ScaledType<C> {
  readonly type: string;
  readonly api: EntityApi<BaseDocument, C, unknown, unknown>;
  readonly collection: SeededCollection<C>;
  /** A body that changes an entity in place without touching its references or roles. */
  patchBody(run: number): unknown;
}

function scaled<D extends BaseDocument, C, R, P>(
  type: string,
  api: EntityApi<D, C, R, P>,
  collection: SeededCollection<C>,
): ScaledType<C> {
  return {
    type,
    api: api as unknown as EntityApi<BaseDocument, C, unknown, unknown>,
    collection,
    patchBody: (run) => ({ tags: { benchRun: String(run) } }),
  };
}

/** Create (`POST`) and update (`PATCH` of tags, of the entities the creates made) of one type, at its size now. */
function scenarios<C>(client: BenchClient, token: string, scaledType: ScaledType<C>, size: number): Scenario[] {
  const { collection } = scaledType;
  let created = 0;
  let patched = 0;
  const targets: string[] = [];
  return [
    {
      label: `create (\`POST ${collection.path}\`)`,
      writes: true,
      run: async () => {
        created++;
        const body = { ...collection.seededInput(size * 10 + created), name: `bench-created-${size}-${created}` };
        const response = await client.call('POST', `${BASE}${collection.path}`, { body, token });
        const id = (expectStatus(response, 201, `create ${collection.path}`).body as { data: { id: string } }).data.id;
        targets.push(id);
      },
    },
    {
      label: `update (\`PATCH ${collection.path}/{id}\`, tags)`,
      writes: true,
      run: async () => {
        patched++;
        const id = targets[patched % targets.length]!;
        const response = await client.call('PATCH', `${BASE}${collection.path}/${id}`, {
          body: scaledType.patchBody(patched),
          token,
        });
        expectStatus(response, 200, `patch ${collection.path}`);
      },
    },
  ];
}

async function measureType<C>(
  deps: Deps,
  meter: BenchMeter,
  client: BenchClient,
  token: string,
  scaledType: ScaledType<C>,
  options: SessionBenchOptions,
): Promise<EntityScaleRow[]> {
  const rows: EntityScaleRow[] = [];
  const { api, collection, type } = scaledType;
  for (const size of ENTITY_SCALE_SIZES) {
    const stored = await meter.uncounted(() => count(deps.store, api.def.collection));
    options.progress(`seeding ${type} to ${size.toLocaleString('en-US')}`);
    const started = performance.now();
    await meter.uncounted(async () => {
      const oneByOne = Math.min(size, SEEDED_ONE_BY_ONE);
      if (stored < oneByOne) await seedEntities(deps, api, collection, stored, oneByOne);
      if (size > Math.max(stored, oneByOne)) {
        await seedEntitiesInBulk(deps, api, collection, Math.max(stored, oneByOne), size);
      }
    });
    options.progress(`  seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    for (const { label, run, prepare } of scenarios(client, token, scaledType, size)) {
      options.progress(`  ${type}, ${size.toLocaleString('en-US')}: ${label}`);
      let figures: OperationFigures | string;
      try {
        figures = await measureOperation(run, meter, options.measure, prepare);
      } catch (error) {
        figures = (error as Error).message.slice(0, 160);
      }
      rows.push({ type, size, label, figures });
    }
  }
  return rows;
}

/**
 * Creates and updates of services, terminators and service policies with 1,000, 10,000 and 40,000 entities of their
 * type stored (bulk-seeded through the store: each document built by its API's create, the items its transaction
 * would put written in batches), on a table of their own: latency and units side by side, to see what grows with the
 * type's size.
 */
export async function entityScaleBench(options: SessionBenchOptions): Promise<EntityScaleRow[]> {
  const bench = await startBenchController('bench-entity-scale', options);
  const { deps, meter, client } = bench;
  try {
    const token = await login(client, options.adminUsername, options.adminPassword);
    // The terminators' service and router.
    const router = await client.call('POST', `${BASE}/edge-routers`, {
      token,
      body: { name: 'bench-terminator-router', isTunnelerEnabled: false, roleAttributes: ['eng'] },
    });
    const routerId = (expectStatus(router, 201, 'create a router').body as { data: { id: string } }).data.id;
    const service = await client.call('POST', `${BASE}/services`, {
      token,
      body: { name: 'bench-terminator-service', encryptionRequired: true },
    });
    const serviceId = (expectStatus(service, 201, 'create a service').body as { data: { id: string } }).data.id;
    const types = [
      scaled('services', serviceApi, seededServices),
      scaled('terminators', terminatorApi, seededTerminators(serviceId, routerId)),
      scaled('service policies', servicePolicyApi, seededServicePolicies),
    ];
    const rows: EntityScaleRow[] = [];
    for (const scaledType of types) {
      rows.push(...(await measureType(deps, meter, client, token, scaledType as ScaledType<unknown>, options)));
    }
    return rows;
  } finally {
    await bench.close();
  }
}
