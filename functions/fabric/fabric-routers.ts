import { type EdgeRouter, edgeRouters } from '#shared/entities/edge-router.ts';
import { ROUTER_FILTERABLE, type TransitRouter, transitRouters } from '#shared/entities/router.ts';
import { notFound } from '#shared/errors/api-error.ts';
import { list, ok } from '#shared/http/envelope.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { pageInMemory } from '#shared/list/page-in-memory.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { requiredSubstrings } from '#shared/query/required-substrings.ts';
import { filterRecords } from '#shared/store/index-queries.ts';
import { withRouterStatuses } from '#shared/views/router-status.ts';
import { fabricRouterView } from './fabric-router-view.ts';

/** The two router types the fabric's routers are, as the table keeps them apart. */
const KINDS = [edgeRouters, transitRouters] as const;

/** The fabric views of some routers of one type, with their statuses (one batch read of their connections). */
function viewsOf(deps: Deps, collection: 'edge-routers' | 'routers', routers: readonly (EdgeRouter | TransitRouter)[]) {
  return withRouterStatuses(deps, collection, routers, fabricRouterView);
}

/**
 * `GET /routers`: edge and transit routers in one list, as the reference's fabric lists every router. Both types'
 * filter records are read (the fields every router has: `ROUTER_FILTERABLE`), filtered, sorted and cut together;
 * then only the page's routers and their connections.
 */
export const listFabricRouters: Operation = documented(
  async (request, deps) => {
    const params = await parseListParams(request.query, ROUTER_FILTERABLE);
    const needles = requiredSubstrings(params.where);
    const [edge, transit] = await Promise.all(KINDS.map((def) => filterRecords(deps.store, def.collection, needles)));
    const edgeIds = new Set((edge ?? []).map((record) => String(record.id)));
    const page = pageInMemory([...(edge ?? []), ...(transit ?? [])], params, ROUTER_FILTERABLE);
    const pageIds = page.items.map((record) => String(record.id));
    const [edgeViews, transitViews] = await Promise.all([
      deps.store
        .getMany(
          edgeRouters,
          pageIds.filter((id) => edgeIds.has(id)),
          'listPage',
        )
        .then((routers) => viewsOf(deps, 'edge-routers', routers)),
      deps.store
        .getMany(
          transitRouters,
          pageIds.filter((id) => !edgeIds.has(id)),
          'listPage',
        )
        .then((routers) => viewsOf(deps, 'routers', routers)),
    ]);
    const byId = new Map([...edgeViews, ...transitViews].map((view) => [view.id, view]));
    const views = pageIds.flatMap((id) => byId.get(id) ?? []);
    return list(views, page.pagination, Object.keys(ROUTER_FILTERABLE));
  },
  { list: { roleFilter: false } },
);

/** `GET /routers/{id}`: an edge or a transit router by id (ids are generated: one names a router of one type). */
export const detailFabricRouter: Operation = async (request, deps) => {
  const id = request.pathParameters.id ?? '';
  const [edge, transit] = await Promise.all([deps.store.get(edgeRouters, id), deps.store.get(transitRouters, id)]);
  if (edge) return ok((await viewsOf(deps, 'edge-routers', [edge.doc]))[0]);
  if (transit) return ok((await viewsOf(deps, 'routers', [transit.doc]))[0]);
  throw notFound('router', id);
};
