import { VIEW_CONCURRENCY } from '#shared/crud/page-views.ts';
import { notFound } from '#shared/errors/api-error.ts';
import { ok } from '#shared/http/envelope.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { FilterableFields } from '#shared/query/filterable-fields.ts';
import { type LinkRecord, linkCostOf, readLink, readLinks } from '#shared/store/link-items.ts';
import { entityRef } from '#shared/views/entity-ref.ts';
import type { NameLookup } from '#shared/views/name-lookup.ts';
import { listInMemory } from './in-memory-list.ts';
import { routerNames } from './router-names.ts';

/** What the links list filters and sorts on: the reference's link symbols (`model/link_manager.go`). */
const LINK_FILTERABLE: FilterableFields = {
  id: 'string',
  protocol: 'string',
  dialAddress: 'string',
  sourceRouter: 'string',
  destRouter: 'string',
  cost: 'number',
  staticCost: 'number',
  sourceLatency: 'number',
  destLatency: 'number',
  state: 'string',
  iteration: 'number',
};

const recordOf = (link: LinkRecord) => ({
  id: link.id,
  protocol: link.protocol,
  dialAddress: link.dialAddress,
  sourceRouter: link.sourceRouterId,
  destRouter: link.destRouterId,
  cost: linkCostOf(link),
  staticCost: link.staticCost,
  sourceLatency: link.sourceLatency,
  destLatency: link.destLatency,
  state: link.state,
  iteration: link.iteration,
});

/**
 * A link as the fabric API shows it (the reference's `linkDetail`, which has no base entity: no times, no tags): its
 * two routers by name, its state and whether an admin set it down, its costs and latencies (nanoseconds), and the
 * underlay connections its dialer last reported.
 */
async function linkView(link: LinkRecord, routers: NameLookup) {
  const [sourceName, destName] = await Promise.all([routers(link.sourceRouterId), routers(link.destRouterId)]);
  return {
    id: link.id,
    protocol: link.protocol,
    sourceRouter: entityRef('routers', link.sourceRouterId, sourceName),
    destRouter: entityRef('routers', link.destRouterId, destName),
    state: link.state,
    down: link.down,
    staticCost: link.staticCost,
    sourceLatency: link.sourceLatency,
    destLatency: link.destLatency,
    cost: linkCostOf(link),
    iteration: link.iteration,
    connections: link.connections,
  };
}

/** `GET /links`: the links the routers reported, filtered, sorted and paged in memory (`readLinks` reads them whole). */
export const listFabricLinks: Operation = documented(
  (request, deps) =>
    listInMemory(request, {
      fields: LINK_FILTERABLE,
      recordOf,
      read: () => readLinks(deps.store),
      views: (page) => {
        const routers = routerNames(deps);
        return mapBounded(page, VIEW_CONCURRENCY, (link) => linkView(link, routers));
      },
    }),
  { list: { roleFilter: false } },
);

/** `GET /links/{id}`: one link. */
export const detailFabricLink: Operation = async (request, deps) => {
  const id = request.pathParameters.id ?? '';
  const link = await readLink(deps.store, id);
  if (!link) throw notFound('link', id);
  return ok(await linkView(link, routerNames(deps)));
};
