import { defaultDeps } from '#functions/create-deps.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import type { OperationMap } from '#shared/http/operation.ts';
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
  ...crudOperations(configTypeApi, {
    list: 'listConfigTypes',
    create: 'createConfigType',
    detail: 'detailConfigType',
    replace: 'updateConfigType',
    patch: 'patchConfigType',
    delete: 'deleteConfigType',
  }),
  listConfigsForConfigType,
  ...crudOperations(configApi, {
    list: 'listConfigs',
    create: 'createConfig',
    detail: 'detailConfig',
    replace: 'updateConfig',
    patch: 'patchConfig',
    delete: 'deleteConfig',
  }),
  listConfigServices,
  ...crudOperations(serviceApi, {
    create: 'createService',
    detail: 'detailService',
    replace: 'updateService',
    patch: 'patchService',
    delete: 'deleteService',
  }),
  listServices,
  listServiceConfig,
  listServiceRoleAttributes,
};

export const handler = createGroupHandler('services', operations, defaultDeps);
