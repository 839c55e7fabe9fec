import { edgeRouters } from '#shared/entities/edge-router.ts';
import { list, ok } from '#shared/http/envelope.ts';
import { callerOf, documented } from '#shared/http/operation.ts';
import { listEntitiesAmong } from '#shared/list/list-entities.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { edgeRoutersFor, edgeRoutersOfIdentity, selectable } from '#shared/policy/access.ts';
import { clientEdgeRouterView, currentIdentityEdgeRouterView } from '#shared/views/client-edge-router-view.ts';
import { withRouterStatuses } from '#shared/views/router-status.ts';
import { reachableService } from './reachable-service.ts';
import { checkSessionToken } from './session-token-header.ts';

const standardList = { list: { roleFilter: false } } as const;

/**
 * `GET /current-identity/edge-routers`: the edge routers the caller's edge router policies grant it, each with its
 * control channel's status (the page's connection items, one batch after the page).
 */
export const getCurrentIdentityEdgeRouters = documented(async (request, deps) => {
  const caller = callerOf(request);
  const params = await parseListParams(request.query, edgeRouters.filterable);
  const ids = await edgeRoutersOfIdentity(deps.store, selectable(caller.identity));
  const page = await listEntitiesAmong(deps, edgeRouters, ids, params);
  return list(
    await withRouterStatuses(deps, 'edge-routers', page.items, currentIdentityEdgeRouterView),
    page.pagination,
    Object.keys(edgeRouters.filterable),
  );
}, standardList);

/**
 * Client `GET /services/{id}/edge-routers`: the edge routers the caller may use for a service it may reach (its edge
 * router policies and the service's service edge router policies both allow them); 404 for a service it cannot
 * reach. A `session-token` header, when sent, must name a valid session of the caller.
 */
export const listServiceEdgeRouters = documented(async (request, deps) => {
  const caller = callerOf(request);
  const params = await parseListParams(request.query, edgeRouters.filterable);
  const [{ service }] = await Promise.all([
    reachableService(deps, caller, request.pathParameters.id ?? ''),
    checkSessionToken(deps, caller, request.headers['session-token'], request.baseUrl),
  ]);
  const ids = await edgeRoutersFor(deps.store, selectable(caller.identity), selectable(service));
  const page = await listEntitiesAmong(deps, edgeRouters, ids, params);
  return ok({ edgeRouters: await withRouterStatuses(deps, 'edge-routers', page.items, clientEdgeRouterView) });
}, standardList);
