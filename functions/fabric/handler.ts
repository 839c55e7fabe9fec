import { defaultDeps } from '#functions/create-deps.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { FABRIC_ROUTES } from '#shared/routes/groups/fabric-routes.ts';
import { detailFabricCircuit, listFabricCircuits } from './fabric-circuits.ts';
import { detailFabricLink, listFabricLinks } from './fabric-links.ts';
import { detailFabricRouter, listFabricRouters } from './fabric-routers.ts';
import { fabricServiceOperations } from './fabric-services.ts';
import { fabricTerminatorOperations } from './fabric-terminators.ts';

export const operations: OperationMap = {
  ...fabricServiceOperations,
  listRouters: listFabricRouters,
  detailRouter: detailFabricRouter,
  ...fabricTerminatorOperations,
  listLinks: listFabricLinks,
  detailLink: detailFabricLink,
  listCircuits: listFabricCircuits,
  detailCircuit: detailFabricCircuit,
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = FABRIC_ROUTES;

export const handler = createGroupHandler('fabric', routes, operations, defaultDeps);
