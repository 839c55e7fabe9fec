import * as z from 'zod';
import { getOrNotFound, sentFields, VIEW_CONCURRENCY } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { PRECEDENCES } from '#shared/entities/identity.ts';
import { transitRouters } from '#shared/entities/router.ts';
import { services } from '#shared/entities/service.ts';
import { type Terminator, terminators } from '#shared/entities/terminator.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { list } from '#shared/http/envelope.ts';
import { documented } from '#shared/http/operation.ts';
import { listEntities } from '#shared/list/list-entities.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { BoolExpr } from '#shared/query/filter-ast.ts';
import { costField, idField, tagsField } from '#shared/schemas/common-fields.ts';
import { nameLookup } from '#shared/views/name-lookup.ts';
import { type TerminatorNames, terminatorView } from '#shared/views/terminator-view.ts';

const addressField = z.string().min(1).max(4096);
const mutableShape = {
  cost: costField.nullable().optional(),
  // Blank is the default precedence, as the reference takes it: the admin console's terminator form sends `""`.
  precedence: z
    .enum(['', ...PRECEDENCES])
    .nullable()
    .optional(),
  tags: tagsField.optional(),
};
const replaceSchema = z.object({
  service: idField,
  router: idField,
  binding: z.string().min(1).max(255),
  address: addressField,
  ...mutableShape,
});
const createSchema = replaceSchema.extend({
  identity: z.string().max(255).nullable().optional(),
  identitySecret: z.base64().max(4096).nullable().optional(),
});
const patchSchema = replaceSchema.partial().extend(mutableShape);
type TerminatorCreate = z.infer<typeof createSchema>;
type TerminatorReplace = z.infer<typeof replaceSchema>;
type TerminatorPatch = z.infer<typeof patchSchema>;

/** Which kind of router an id names, as the link fields hold it; a 400 naming `router` when it names none. */
async function routerLinks(deps: Deps, routerId: string) {
  if (await deps.store.get(edgeRouters, routerId)) return { edgeRouterId: routerId, transitRouterId: null };
  if (await deps.store.get(transitRouters, routerId)) return { edgeRouterId: null, transitRouterId: routerId };
  throw invalidField('router', `no router found with id ${routerId}`, routerId);
}

async function fieldsFrom(deps: Deps, input: TerminatorReplace, before?: Terminator) {
  const links =
    before && before.router === input.router
      ? { edgeRouterId: before.edgeRouterId, transitRouterId: before.transitRouterId }
      : await routerLinks(deps, input.router);
  return {
    service: input.service,
    router: input.router,
    ...links,
    binding: input.binding,
    address: input.address,
    cost: input.cost ?? 0,
    precedence: input.precedence || 'default',
    tags: input.tags ?? {},
  };
}

function asInput(terminator: Terminator): TerminatorReplace {
  const { service, router, binding, address, cost, precedence, tags } = terminator;
  return { service, router, binding, address, cost, precedence, tags };
}

function namesFor(deps: Deps): TerminatorNames {
  return {
    service: nameLookup(deps, services),
    edgeRouter: nameLookup(deps, edgeRouters),
    transitRouter: nameLookup(deps, transitRouters),
  };
}

/**
 * Terminators: where a router reaches a service's server. The service and the router must exist (checked in the
 * writing transaction by the kit's links) and deleting either deletes its terminators.
 */
export const terminatorApi: EntityApi<Terminator, TerminatorCreate, TerminatorReplace, TerminatorPatch> = {
  def: terminators,
  createSchema,
  replaceSchema,
  patchSchema,
  create: async (input, context) => ({
    doc: {
      id: context.id,
      createdAt: context.now,
      updatedAt: context.now,
      ...(await fieldsFrom(context.deps, input)),
      identity: input.identity ?? '',
      identitySecret: input.identitySecret ?? null,
    },
  }),
  replace: async (before, input, context) => ({ ...before, ...(await fieldsFrom(context.deps, input, before)) }),
  patch: async (before, input, sent, context) => ({
    ...before,
    ...(await fieldsFrom(
      context.deps,
      { ...asInput(before), ...sentFields(input, sent) } as TerminatorReplace,
      before,
    )),
  }),
  view: (deps, doc) => terminatorView(doc, namesFor(deps)),
  viewPage: (deps, docs) => {
    const names = namesFor(deps);
    return mapBounded(docs, VIEW_CONCURRENCY, (doc) => terminatorView(doc, names));
  },
};

/** `GET /services/{id}/terminators`: the service's terminators, as `GET /terminators` with `service = "<id>"`. */
export const listServiceTerminators = documented(
  async (request, deps) => {
    const service = await getOrNotFound(deps, services, request.pathParameters.id ?? '');
    const params = parseListParams(request.query, terminators.filterable);
    const ofService: BoolExpr = {
      kind: 'equals',
      lhs: { kind: 'field', field: 'service', position: 0 },
      negated: false,
      value: { type: 'string', value: service.doc.id, position: 0 },
    };
    const where: BoolExpr = params.where ? { kind: 'and', operands: [ofService, params.where] } : ofService;
    const page = await listEntities(deps, terminators, { ...params, where });
    return list(await terminatorApi.viewPage!(deps, page.items), page.pagination, Object.keys(terminators.filterable));
  },
  { list: { roleFilter: false } },
);
