import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { listRoleAttributes } from '#shared/crud/list-role-attributes.ts';
import { type Config, configs } from '#shared/entities/config.ts';
import { configTypes } from '#shared/entities/config-type.ts';
import { services } from '#shared/entities/service.ts';
import { list } from '#shared/http/envelope.ts';
import { callerOf, documented, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { listEntities } from '#shared/list/list-entities.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { pageInMemory } from '#shared/list/page-in-memory.ts';
import { CONFIG_TYPES_QUERY } from '#shared/openapi/query-parameters.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { referrerIds } from '#shared/store/index-queries.ts';
import { configApi } from './config-api.ts';
import { resolveConfigTypes, serviceViewPage } from './service-configs.ts';

/** The config types whose data a service list shows: the `configTypes` query (comma separated), else the session's. */
function requestedConfigTypes(request: OperationRequest): readonly string[] {
  const query = request.query.configTypes;
  if (query && query.length > 0) return query.flatMap((value) => value.split(','));
  return callerOf(request).session.configTypes;
}

/** `GET /services`: services with their role filter, and the data of the config types asked for. */
export const listServices = documented(
  async (request, deps) => {
    const { configTypes: _wanted, ...query } = request.query;
    const params = await parseListParams(query, services.filterable, { roleFilter: true });
    const [page, wanted] = await Promise.all([
      listEntities(deps, services, params),
      resolveConfigTypes(deps, requestedConfigTypes(request)),
    ]);
    return list(await serviceViewPage(deps, page.items, wanted), page.pagination, Object.keys(services.filterable));
  },
  { list: { roleFilter: true }, query: [CONFIG_TYPES_QUERY] },
);

/** `GET /service-role-attributes`. */
export const listServiceRoleAttributes: Operation = (request, deps) =>
  listRoleAttributes(request, deps, services.collection);

async function configPage(request: OperationRequest, deps: Deps, docs: readonly Config[]) {
  const page = pageInMemory(docs, await parseListParams(request.query, configs.filterable), configs.filterable);
  return list(await configApi.viewPage!(deps, page.items), page.pagination, Object.keys(configs.filterable));
}

/** These lists take the standard list query (paged in memory), without a role filter. */
const standardList = { list: { roleFilter: false } } as const;

/** `GET /config-types/{id}/configs`. */
export const listConfigsForConfigType = documented(async (request, deps) => {
  const configType = await getOrNotFound(deps, configTypes, request.pathParameters.id ?? '');
  const ids = await referrerIds(
    deps.store,
    { collection: configTypes.collection, id: configType.doc.id },
    configs.collection,
  );
  return configPage(request, deps, await deps.store.getMany(configs, ids));
}, standardList);

/** `GET /services/{id}/configs`. */
export const listServiceConfig = documented(async (request, deps) => {
  const service = await getOrNotFound(deps, services, request.pathParameters.id ?? '');
  return configPage(request, deps, await deps.store.getMany(configs, service.doc.configs));
}, standardList);

/** `GET /configs/{id}/services`. */
export const listConfigServices = documented(async (request, deps) => {
  const config = await getOrNotFound(deps, configs, request.pathParameters.id ?? '');
  const ids = await referrerIds(deps.store, { collection: configs.collection, id: config.doc.id }, services.collection);
  const docs = await deps.store.getMany(services, ids);
  const page = pageInMemory(docs, await parseListParams(request.query, services.filterable), services.filterable);
  return list(await serviceViewPage(deps, page.items, new Set()), page.pagination, Object.keys(services.filterable));
}, standardList);
