import { defaultDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
import { CONFIG_TYPES, CONFIGS, SERVICES, SERVICES_ROUTES } from '#shared/routes/groups/services-routes.ts';
import { configApi } from './config-api.ts';
import { configTypeApi } from './config-type-api.ts';
import { serviceApi } from './service-api.ts';
import {
  listConfigServices,
  listConfigsForConfigType,
  listServiceConfig,
  listServiceRoleAttributes,
  listServices,
} from './service-lists.ts';

export const operations: OperationMap = {
  ...crudOperations(CONFIG_TYPES, configTypeApi),
  listConfigsForConfigType,
  ...crudOperations(CONFIGS, configApi),
  listConfigServices,
  ...crudOperations(SERVICES, serviceApi, { list: listServices }),
  listServiceConfig,
  listServiceRoleAttributes,
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = SERVICES_ROUTES;

export const handler = createGroupHandler('services', routes, operations, defaultDeps);
