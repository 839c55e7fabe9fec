import type { z } from 'zod';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import { notFound } from '../errors/api-error.ts';
import { created, empty, list, ok } from '../http/envelope.ts';
import { documented, type Operation, type OperationRequest } from '../http/operation.ts';
import { parseWith } from '../http/validate.ts';
import { newId } from '../ids.ts';
import { listEntities } from '../list/list-entities.ts';
import { parseListParams } from '../list/list-params.ts';
import { moveServiceAccessMarkers } from '../policy/service-access-fan-out.ts';
import type { Deps } from '../ports/deps.ts';
import type { CrudAction, CrudResource } from '../routes/crud-resource.ts';
import { deleteEntity } from '../store/delete-entity.ts';
import { MAX_TRANSACTION_ITEMS, type Stored } from '../store/entity-store.ts';
import { withOptimisticRetry } from '../store/optimistic-retry.ts';
import type { WriteOp } from '../store/write-op.ts';
import type { EntityApi, WriteContext } from './entity-api.ts';
import { pageViews } from './page-views.ts';
import {
  mergedNested,
  mergedPatch,
  nestedPatchSchema,
  patchSchemaOf,
  sentFields,
  sentKeys,
  tagsOf,
} from './patch-body.ts';
import { checkedVariant, patchedVariant } from './variants.ts';

/** The request body as an object: a missing body is validated as `{}` so the schema names the missing fields. */
function bodyOf(request: OperationRequest): unknown {
  return request.body === undefined ? {} : request.body;
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

function context(request: OperationRequest, deps: Deps): WriteContext {
  return { deps, request, now: deps.now().toISOString() };
}

/**
 * A new entity's document as the kit writes it, with the writes that commit with it: the type's create, with the id,
 * the timestamps and the body's tags set.
 */
export async function newEntity<D extends BaseDocument, C, R, P>(
  api: EntityApi<D, C, R, P>,
  input: C,
  ctx: WriteContext & { readonly id: string },
): Promise<{ doc: D; ops: readonly WriteOp[] }> {
  if (!api.create) throw new Error(`${api.def.label} has no create`);
  const body = api.variants ? checkedVariant(api.variants, api.def.label, input as object) : input;
  const { doc, ops = [] } = await api.create(body as C, ctx);
  const stamped = { ...doc, id: ctx.id, createdAt: ctx.now, updatedAt: ctx.now, tags: tagsOf(input) };
  return { doc: stamped as unknown as D, ops };
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
        const params = await parseListParams(request.query, def.filterable, { roleFilter });
        const page = await listEntities(deps, def, params);
        return list(await pageViews(deps, api, page.items), page.pagination, Object.keys(def.filterable));
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
        const { doc, ops } = await newEntity(api, input, { ...context(request, deps), id: newId() });
        await deps.store.transact([...deps.store.createOps(def, doc), ...ops]);
        await moveServiceAccessMarkers(deps, def, [doc]);
        request.logger.info(`${def.label} created`, { id: doc.id });
        return created(def.collection, doc.id);
      },
      { body: createSchema },
    );
  },

  replace: (api) => replaceOperation(api),
  patch: (api) => patchOperation(api),

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
      await api.afterDelete?.(deps, deleted);
      request.logger.info(`${def.label} deleted`, { id: request.pathParameters.id });
      return empty();
    };
  },
};

/** PUT: the fields the type's replace maps from the body over the stored document, with the body's tags. */
function replaceOperation<D extends BaseDocument, C, R, P>(api: EntityApi<D, C, R, P>): Operation {
  const { replace } = api;
  if (!api.replaceSchema || !replace) throw new Error(`${api.def.label} has no replace`);
  const { variants, def } = api;
  return updateOperation(api, 'replace', api.replaceSchema, async (before, input, _sent, ctx) => {
    const body = variants ? checkedVariant(variants, def.label, input as object, asRecord(before)) : input;
    return { ...(await replace(before, body as R, ctx)), tags: tagsOf(input) };
  });
}

/**
 * PATCH: the type's own patch, or the replace of the stored document (as a replace body) with the sent keys over it;
 * tags change only when sent.
 */
function patchOperation<D extends BaseDocument, C, R, P>(api: EntityApi<D, C, R, P>): Operation {
  const { patch, replace, replaceSchema, variants, def, nestedPatch } = api;
  const keptOnNull: readonly string[] = api.keptOnNull ?? [];
  const schema =
    api.patchSchema ??
    (replaceSchema && (nestedPatch ? nestedPatchSchema(replaceSchema) : patchSchemaOf(replaceSchema, keptOnNull)));
  if (!schema || !(patch || replace)) throw new Error(`${def.label} has no patch`);
  return updateOperation(api, 'patch', schema, async (before, input, sent, ctx) => {
    const tags = sent.has('tags') ? { tags: tagsOf(input) } : {};
    if (patch) return { ...(await patch(before, input as P, sent, ctx)), ...tags };
    const current = api.asInput ? api.asInput(before) : (before as unknown as R);
    const changed = sentFields(input as Record<string, unknown>, sent);
    const merged = nestedPatch ? mergedNested(current, changed) : mergedPatch(current, changed, keptOnNull);
    const body = variants ? patchedVariant(variants, def.label, asRecord(before), changed, merged as object) : merged;
    return { ...(await replace!(before, body as R, ctx)), ...tags };
  });
}

/** A stored document as the plain record the variant checks read. */
function asRecord(doc: BaseDocument): Readonly<Record<string, unknown>> {
  return doc as unknown as Readonly<Record<string, unknown>>;
}

/**
 * A replace or patch: the stored document with the fields `change` gives over it, written with the type's own update
 * writes in one version-checked transaction, again when a concurrent writer got there first.
 */
function updateOperation<D extends BaseDocument, C, R, P>(
  api: EntityApi<D, C, R, P>,
  action: 'replace' | 'patch',
  schema: z.ZodType,
  change: (before: D, input: unknown, sent: ReadonlySet<string>, ctx: WriteContext) => Promise<Partial<D>>,
): Operation {
  const { def } = api;
  return documented(
    async (request, deps) => {
      const input = parseWith(schema, bodyOf(request));
      const sent = sentKeys(request.body);
      const versions = await withOptimisticRetry(async () => {
        const stored = await getOrNotFound(deps, def, request.pathParameters.id ?? '');
        const ctx = context(request, deps);
        api.guard?.(stored.doc, action, ctx);
        const updated = { ...stored.doc, ...(await change(stored.doc, input, sent, ctx)), updatedAt: ctx.now } as D;
        const ops = deps.store.replaceOps(def, stored, updated);
        const own =
          (await api.updateOps?.(stored.doc, updated, { ...ctx, room: MAX_TRANSACTION_ITEMS - ops.length })) ?? [];
        await deps.store.transact([...ops, ...own]);
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
