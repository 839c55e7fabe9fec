import { defaultDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { listRoleAttributes } from '#shared/crud/list-role-attributes.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { edgeRouterApi, updateEdgeRouterOperations } from './edge-router-api.ts';
import { reEnrollEdgeRouter } from './re-enroll-edge-router.ts';
import { listServiceTerminators, terminatorApi } from './terminator-api.ts';
import { transitRouterApi } from './transit-router-api.ts';

export const operations: OperationMap = {
  ...crudOperations(edgeRouterApi, {
    list: 'listEdgeRouters',
    create: 'createEdgeRouter',
    detail: 'detailEdgeRouter',
    delete: 'deleteEdgeRouter',
  }),
  ...updateEdgeRouterOperations,
  reEnrollEdgeRouter,
  listEdgeRouterRoleAttributes: (request, deps) => listRoleAttributes(request, deps, edgeRouters.collection),
  // One type under the reference's two names for it.
  ...crudOperations(transitRouterApi, {
    list: 'listTransitRouters',
    create: 'createTransitRouter',
    detail: 'detailTransitRouter',
    replace: 'updateTransitRouter',
    patch: 'patchTransitRouter',
    delete: 'deleteTransitRouter',
  }),
  ...crudOperations(transitRouterApi, {
    list: 'listRouters',
    create: 'createRouter',
    detail: 'detailRouter',
    replace: 'updateRouter',
    patch: 'patchRouter',
    delete: 'deleteRouter',
  }),
  ...crudOperations(terminatorApi, {
    list: 'listTerminators',
    create: 'createTerminator',
    detail: 'detailTerminator',
    replace: 'updateTerminator',
    patch: 'patchTerminator',
    delete: 'deleteTerminator',
  }),
  listServiceTerminators,
};

export const handler = createGroupHandler('routers', operations, defaultDeps);
