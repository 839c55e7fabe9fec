import { sessionEndingDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { listRoleAttributes } from '#shared/crud/list-role-attributes.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import {
  EDGE_ROUTERS,
  ROUTERS,
  ROUTERS_ROUTES,
  TERMINATORS,
  TRANSIT_ROUTERS,
} from '#shared/routes/groups/routers-routes.ts';
import { edgeRouterApi } from './edge-router-api.ts';
import { reEnrollEdgeRouter } from './re-enroll-edge-router.ts';
import { listServiceTerminators } from './service-terminators.ts';
import { terminatorApi } from './terminator-api.ts';
import { transitRouterApi } from './transit-router-api.ts';

export const operations: OperationMap = {
  ...crudOperations(EDGE_ROUTERS, edgeRouterApi),
  reEnrollEdgeRouter,
  listEdgeRouterRoleAttributes: (request, deps) => listRoleAttributes(request, deps, edgeRouters.collection),
  // One type under the reference's two names for it.
  ...crudOperations(TRANSIT_ROUTERS, transitRouterApi),
  ...crudOperations(ROUTERS, transitRouterApi),
  ...crudOperations(TERMINATORS, terminatorApi),
  listServiceTerminators,
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = ROUTERS_ROUTES;

export const handler = createGroupHandler('routers', routes, operations, sessionEndingDeps);
