import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import { notFound } from '../errors/api-error.ts';
import { created, empty, list, ok } from '../http/envelope.ts';
import { documented, type Operation, type OperationRequest } from '../http/operation.ts';
import { parseWith } from '../http/validate.ts';
import { newId } from '../ids.ts';
import { listEntities } from '../list/list-entities.ts';
import { parseListParams } from '../list/list-params.ts';
import { mapBounded } from '../map-bounded.ts';
import { moveServiceAccessMarkers } from '../policy/service-access-fan-out.ts';
import type { Deps } from '../ports/deps.ts';
import type { CrudAction, CrudResource } from '../routes/crud-resource.ts';
import { deleteEntity } from '../store/delete-entity.ts';
import { backOff, ConcurrentModificationError, type Stored } from '../store/entity-store.ts';
import type { EntityApi, WriteContext } from './entity-api.ts';

/** How many views of a page are built at once (each may read DynamoDB). */
export const VIEW_CONCURRENCY = 16;
/**
 * How often a read-modify-write that lost to a concurrent writer runs again (with back-off): bursts of a few dozen
 * updates of one entity from clients that do not retry (the ziti CLI, Terraform) all get through.
 */
const OPTIMISTIC_ATTEMPTS = 12;

/** The request body as an object: a missing body is validated as `{}` so the schema names the missing fields. */
function bodyOf(request: OperationRequest): unknown {
  return request.body === undefined ? {} : request.body;
}

/** The top-level keys a JSON object body had, which is what a PATCH changes. */
export function sentKeys(body: unknown): ReadonlySet<string> {
  return new Set(body !== null && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : []);
}

/** The fields of a parsed PATCH body its sender actually sent (schema defaults and absent keys left out). */
export function sentFields<T extends object>(input: T, sent: ReadonlySet<string>): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([key]) => sent.has(key))) as Partial<T>;
}

/** Reads an entity or answers 404. */
export async function getOrNotFound<D extends BaseDocument>(
  deps: Deps,
  def: EntityDefinition<D>,
  id: string,
): Promise<Stored<D>> {
  const stored = await deps.store.get(def, id);
  if (!stored) throw notFound(def.label, id);
  return stored;
}

/** Runs a read-modify-write again when a concurrent writer got there first. */
export async function withOptimisticRetry<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ConcurrentModificationError) || tries >= OPTIMISTIC_ATTEMPTS) throw error;
      await backOff(tries - 1);
    }
  }
}

function context(request: OperationRequest, deps: Deps): WriteContext {
  return { deps, request, now: deps.now().toISOString() };
}

/** The kit's operation for each action of a collection, from the type's API. */
const KIT_OPERATIONS: {
  readonly [A in CrudAction]: <D extends BaseDocument, C, R, P>(api: EntityApi<D, C, R, P>) => Operation;
} = {
  list: (api) => {
    const { def } = api;
    const roleFilter = api.roleFilter ?? false;
    return documented(
      async (request, deps) => {
        const params = parseListParams(request.query, def.filterable, { roleFilter });
        const page = await listEntities(deps, def, params);
        const views = api.viewPage
          ? await api.viewPage(deps, page.items)
          : await mapBounded(page.items, VIEW_CONCURRENCY, (doc) => api.view(deps, doc));
        return list(views, page.pagination, Object.keys(def.filterable));
      },
      { list: { roleFilter } },
    );
  },

  detail: (api) => async (request, deps) => {
    const stored = await getOrNotFound(deps, api.def, request.pathParameters.id ?? '');
    return ok(await api.view(deps, stored.doc));
  },

  create: (api) => {
    const { def, createSchema, create } = api;
    if (!createSchema || !create) throw new Error(`${def.label} has no create`);
    return documented(
      async (request, deps) => {
        const input = parseWith(createSchema, bodyOf(request));
        const id = newId();
        const { doc, ops = [] } = await create(input, { ...context(request, deps), id });
        await deps.store.transact([...deps.store.createOps(def, doc), ...ops]);
        await moveServiceAccessMarkers(deps, def, [doc]);
        request.logger.info(`${def.label} created`, { id });
        return created(def.collection, id);
      },
      { body: createSchema },
    );
  },

  replace: (api) => updateOperation(api, 'replace'),
  patch: (api) => updateOperation(api, 'patch'),

  delete: (api) => {
    const { def } = api;
    return async (request, deps) => {
      const deleted = await withOptimisticRetry(async () => {
        const stored = await getOrNotFound(deps, def, request.pathParameters.id ?? '');
        api.guard?.(stored.doc, 'delete', context(request, deps));
        await deleteEntity(deps, def, stored, (room) => api.deleteOps?.(deps, stored, room) ?? Promise.resolve([]), {
          drainCascades: api.manyChildren === true,
          namedWith: api.namedWith?.(stored.doc) ?? [],
        });
        return stored.doc;
      });
      await moveServiceAccessMarkers(deps, def, [deleted]);
      request.logger.info(`${def.label} deleted`, { id: request.pathParameters.id });
      return empty();
    };
  },
};

function updateOperation<D extends BaseDocument, C, R, P>(
  api: EntityApi<D, C, R, P>,
  action: 'replace' | 'patch',
): Operation {
  const { def, replace, patch } = api;
  const schema = action === 'replace' ? api.replaceSchema : api.patchSchema;
  if (!schema || (action === 'replace' ? !replace : !patch)) throw new Error(`${def.label} has no ${action}`);
  return documented(
    async (request, deps) => {
      const input = parseWith(schema, bodyOf(request));
      const sent = sentKeys(request.body);
      const versions = await withOptimisticRetry(async () => {
        const stored = await getOrNotFound(deps, def, request.pathParameters.id ?? '');
        const ctx = context(request, deps);
        api.guard?.(stored.doc, action, ctx);
        const next =
          action === 'replace'
            ? await replace!(stored.doc, input as R, ctx)
            : await patch!(stored.doc, input as P, sent, ctx);
        const updated = { ...next, updatedAt: ctx.now };
        await deps.store.transact([
          ...deps.store.replaceOps(def, stored, updated),
          ...(api.updateOps?.(updated, ctx) ?? []),
        ]);
        return [stored.doc, updated];
      });
      await moveServiceAccessMarkers(deps, def, versions);
      return empty();
    },
    { body: schema },
  );
}

/**
 * The operations of a collection (`CrudResource`, declared with the route table) for an entity type, named as the
 * resource names them: the route table's lines and these operations come from the one declaration. Each carries its
 * request schema or list query as `docs`, which the API documents are generated from (`shared/openapi/`). `custom`
 * serves an action with an operation of the type's own instead of the kit's (a list that reads otherwise).
 */
export function crudOperations<D extends BaseDocument, C, R, P>(
  resource: CrudResource,
  api: EntityApi<D, C, R, P>,
  custom: Partial<Record<CrudAction, Operation>> = {},
): Record<string, Operation> {
  return Object.fromEntries(
    resource.actions.map((action) => [resource.names[action], custom[action] ?? KIT_OPERATIONS[action](api)]),
  );
}
