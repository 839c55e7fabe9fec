import type { ServicePolicyRecord } from '#shared/entities/policies.ts';
import { type Service, services } from '#shared/entities/service.ts';
import { notFound } from '#shared/errors/api-error.ts';
import { list, ok } from '#shared/http/envelope.ts';
import { callerOf, documented, type Operation } from '#shared/http/operation.ts';
import { type ListPage, listEntitiesAmong } from '#shared/list/list-entities.ts';
import { type ListParams, parseListParams } from '#shared/list/list-params.ts';
import { pageInMemory } from '#shared/list/page-in-memory.ts';
import { matchesRoles } from '#shared/list/role-filter.ts';
import { CONFIG_TYPES_QUERY } from '#shared/openapi/query-parameters.ts';
import { grantAmong, type ServiceGrant, selectable, servicesGrantedBy } from '#shared/policy/access.ts';
import type { RoleResolver } from '#shared/policy/reach.ts';
import { ALL_ROLE } from '#shared/policy/roles.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { count, orderedIds } from '#shared/store/index-queries.ts';
import {
  clientResolver,
  clientServiceViewOf,
  configMaps,
  postureCheckIdsOf,
  readCallerServiceContext,
  readPostureChecks,
} from './client-service-views.ts';
import { requestedConfigTypes } from './config-types-wanted.ts';

/** Up to this many granted services are read whole to page them in memory, in one wave. */
const READ_WHOLE_LIMIT = 1000;

/** Whether the list is in plain id order (no sort, or by id alone). */
function inIdOrder(params: ListParams): boolean {
  return params.sort.length === 0 || (params.sort.length === 1 && params.sort[0]?.field === 'id');
}

/**
 * One page of the granted services in one wave: cut from the ids in id order, or, with a filter, a role filter or
 * another sort, read whole and paged in memory (up to `READ_WHOLE_LIMIT` of them; beyond, their filter records are
 * read first, one wave more).
 */
async function servicePage(deps: Deps, ids: readonly string[], params: ListParams): Promise<ListPage<Service>> {
  const plainIdOrder = inIdOrder(params) && !params.where && !params.roleFilter;
  if (plainIdOrder || ids.length > READ_WHOLE_LIMIT) {
    return listEntitiesAmong(deps, services, ids, params, undefined, 'clientGrants');
  }
  const { roleFilter } = params;
  return deps.store
    .getMany(services, ids, 'clientGrants')
    .then((docs) =>
      pageInMemory(
        docs,
        params,
        services.filterable,
        (doc) => !roleFilter || matchesRoles(doc.id, doc.roleAttributes, roleFilter.roles, roleFilter.semantic),
      ),
    );
}

/** A page of granted services with each one's grant, read once the ids are known. */
type PageRead = () => Promise<{ page: ListPage<Service>; grants: ReadonlyMap<string, ServiceGrant> }>;

/**
 * Which services the policies grant (one wave), and how to read the page of them (the next). When a policy grants
 * `#all` services and the list is in plain id order, every service is reachable: the page's ids come from the type's
 * id order and its total from the counter, and each service's grant is checked in memory once read, so no list of
 * every service id is read. Otherwise the granted ids are resolved and paged (`servicePage`).
 */
async function grantedPage(
  deps: Deps,
  resolver: RoleResolver,
  policies: readonly ServicePolicyRecord[],
  params: ListParams,
): Promise<PageRead> {
  const plainIdOrder = !params.where && !params.roleFilter && inIdOrder(params);
  if (plainIdOrder && policies.some((policy) => policy.serviceRoles.includes(ALL_ROLE))) {
    const direction = params.sort[0]?.direction ?? 'asc';
    const [ids, totalCount] = await Promise.all([
      orderedIds(deps.store, services.collection, 'id', direction, params.offset, params.limit),
      count(deps.store, services.collection),
    ]);
    return async () => {
      const items = await deps.store.getMany(services, ids, 'clientGrants');
      return {
        page: { items, pagination: { limit: params.limit, offset: params.offset, totalCount } },
        grants: new Map(items.map((doc) => [doc.id, grantAmong(policies, selectable(doc))])),
      };
    };
  }
  const grants = await servicesGrantedBy(resolver, policies);
  return async () => ({ page: await servicePage(deps, [...grants.keys()], params), grants });
}

/**
 * Client `GET /services`: the services the caller may dial or bind (admins too: the client API shows what policies
 * grant), paged, filtered and sorted like any list, each with its permissions, config and posture queries.
 *
 * Sequential DynamoDB waves after the caller is resolved, whatever the number of policies, services and checks:
 * 1. the service policies selecting the identity, its overrides, the config types asked for, the posture check count
 *    and the session's posture data;
 * 2. the services and posture checks those policies select (each distinct role once; with `#all` services, the
 *    page's ids and the type's count instead: `grantedPage`);
 * 3. the page's services (see `servicePage`) and the posture checks;
 * 4. the configs of the page (its services' own and the overrides').
 */
export const listServices = documented(
  async (request, deps) => {
    const caller = callerOf(request);
    const { configTypes: _requested, ...query } = request.query;
    const params = await parseListParams(query, services.filterable, { roleFilter: true });
    const context = await readCallerServiceContext(deps, caller, requestedConfigTypes(request, caller));
    const resolver = clientResolver(deps);
    const [readPage, checkIds] = await Promise.all([
      grantedPage(deps, resolver, context.policies, params),
      postureCheckIdsOf(resolver, context, context.policies),
    ]);
    const [{ page, grants }, checks] = await Promise.all([readPage(), readPostureChecks(deps, checkIds)]);
    const reads = { context, checkIds, checks, configs: await configMaps(deps, page.items, context) };
    const views = page.items.flatMap((doc) => {
      const grant = grants.get(doc.id);
      return grant ? [clientServiceViewOf(doc, grant, reads)] : [];
    });
    return list(views, page.pagination, Object.keys(services.filterable));
  },
  { list: { roleFilter: true }, query: [CONFIG_TYPES_QUERY] },
);
// A device's service list changes nothing: its caller is read eventually consistent first.
Object.assign(listServices, { callerReads: { eventual: true as const } });

/**
 * Client `GET /services/{id}`: the same view of one service; 404 when the caller may neither dial nor bind it.
 * Three waves: the service with the caller's context (wave 1 above), then its configs and the checks its granting
 * policies name, then those checks.
 */
export const detailService: Operation = documented(
  async (request, deps) => {
    const caller = callerOf(request);
    const id = request.pathParameters.id ?? '';
    const [context, stored] = await Promise.all([
      readCallerServiceContext(deps, caller, requestedConfigTypes(request, caller)),
      deps.store.get(services, id, 'clientGrants'),
    ]);
    const grant = stored && grantAmong(context.policies, selectable(stored.doc));
    if (!stored || !grant || grant.policies.length === 0) throw notFound(services.label, id);
    const [checkIds, configs] = await Promise.all([
      postureCheckIdsOf(clientResolver(deps), context, grant.policies),
      configMaps(deps, [stored.doc], context),
    ]);
    const checks = await readPostureChecks(deps, checkIds);
    return ok(clientServiceViewOf(stored.doc, grant, { context, checkIds, checks, configs }));
  },
  { query: [CONFIG_TYPES_QUERY] },
);
