import { defaultDeps } from '#functions/create-deps.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { CLIENT_ROUTES } from '#shared/routes/groups/client-routes.ts';
import { getCurrentIdentityEdgeRouters, listServiceEdgeRouters } from './client-edge-routers.ts';
import { detailService, listServices } from './client-services.ts';
import { listServiceTerminators } from './client-terminators.ts';
import { listProtocols } from './protocols.ts';

export const operations: OperationMap = {
  listServices,
  detailService,
  listServiceEdgeRouters,
  listServiceTerminators,
  getCurrentIdentityEdgeRouters,
  listProtocols,
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = CLIENT_ROUTES;

export const handler = createGroupHandler('client', routes, operations, defaultDeps);
