import type { edgeRouterApi } from '#functions/routers/edge-router-api.ts';
import type { serviceApi } from '#functions/services/service-api.ts';
import { newEntity } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import type { BaseDocument } from '#shared/entities/entity-definition.ts';
import type { OperationRequest } from '#shared/http/operation.ts';
import { newId } from '#shared/ids.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { paddedName, SEED_CONCURRENCY, seededRoleAttributes, seedIndexes } from './seed-identities.ts';

/** A collection the bench seeds through its API's own document builder and measures over HTTP. */
export interface SeededCollection<C> {
  /** The path under the management API, and the plural the tables print. */
  readonly path: string;
  readonly plural: string;
  /** The create operation's name in the route table. */
  readonly createOperation: string;
  /** The name of the entity seeded at `index` (`bench-service-000123`). */
  seededName(index: number): string;
  /** The create body of the entity seeded at `index`, as a client would send it. */
  seededInput(index: number): C;
}

export const seededServices: SeededCollection<Parameters<NonNullable<typeof serviceApi.create>>[0]> = {
  path: '/services',
  plural: 'services',
  createOperation: 'createService',
  seededName: (index) => paddedName('bench-service', index),
  seededInput: (index) => ({
    name: paddedName('bench-service', index),
    encryptionRequired: index % 4 !== 0,
    roleAttributes: seededRoleAttributes(index),
    tags: index % 3 === 0 ? { team: `team-${index % 13}` } : null,
    terminatorStrategy: index % 5 === 0 ? 'weighted' : '',
  }),
};

export const seededEdgeRouters: SeededCollection<Parameters<NonNullable<typeof edgeRouterApi.create>>[0]> = {
  path: '/edge-routers',
  plural: 'edge routers',
  createOperation: 'createEdgeRouter',
  seededName: (index) => paddedName('bench-edge-router', index),
  seededInput: (index) => ({
    name: paddedName('bench-edge-router', index),
    cost: index % 10,
    roleAttributes: seededRoleAttributes(index),
    tags: index % 3 === 0 ? { site: `site-${index % 11}` } : null,
    appData: index % 5 === 0 ? { rack: `rack-${index % 7}` } : null,
    // A tunneling router also gets a router identity, which would add to the identities measured apart.
    isTunnelerEnabled: false,
  }),
};

/** The request a create's document builder sees: the create route, no body (the builders read only the input). */
export function seedRequest(deps: Deps, createOperation: string): OperationRequest {
  const route = ROUTES.find((candidate) => candidate.operation === createOperation);
  if (!route) throw new Error(`no route ${createOperation}`);
  return {
    requestId: 'bench-seed',
    route,
    api: 'management',
    pathParameters: {},
    query: {},
    headers: {},
    body: undefined,
    rawBody: undefined,
    sourceIp: '127.0.0.1',
    clientCertPem: undefined,
    caller: undefined,
    logger: deps.logger,
    baseUrl: 'https://127.0.0.1',
  };
}

/**
 * The writes of the seeded entity `index`'s create: the kit's create builds its document and its extra writes, as
 * `POST` would, without HTTP, validation or sessions.
 */
export function seededCreateWrites<D extends BaseDocument, C, R, P>(
  deps: Deps,
  api: EntityApi<D, C, R, P>,
  collection: SeededCollection<C>,
): (index: number) => Promise<WriteOp[]> {
  const request = seedRequest(deps, collection.createOperation);
  const now = deps.now().toISOString();
  return async (index) => {
    const { doc, ops } = await newEntity(api, collection.seededInput(index), { deps, request, now, id: newId() });
    return [...deps.store.createOps(api.def, doc), ...ops];
  };
}

/** Seeds entities `from` (inclusive) to `to` (exclusive) through the store, each in the transaction a create commits. */
export async function seedEntities<D extends BaseDocument, C, R, P>(
  deps: Deps,
  api: EntityApi<D, C, R, P>,
  collection: SeededCollection<C>,
  from: number,
  to: number,
): Promise<void> {
  const writesOf = seededCreateWrites(deps, api, collection);
  await mapBounded(seedIndexes(from, to), SEED_CONCURRENCY, async (index) =>
    deps.store.transact(await writesOf(index)),
  );
}
