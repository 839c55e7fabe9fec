import { BASE_FILTERABLE } from '#shared/entities/entity-definition.ts';
import { list } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { CONTROLLER_ID } from '#shared/ids.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { pageInMemory } from '#shared/list/page-in-memory.ts';
import { ctrlAddressOf } from '#shared/net/ctrl-address.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { FilterableFields } from '#shared/query/filterable-fields.ts';
import type { Api } from '#shared/routes/route.ts';
import { API_BASE_PATHS } from '#shared/routes/route.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';

const CONTROLLER_FILTERABLE: FilterableFields = {
  ...BASE_FILTERABLE,
  name: 'string',
  isOnline: 'boolean',
  lastJoinedAt: 'datetime',
};

/**
 * This deployment as the one controller of the network: its API addresses are derived like `/version`'s (the
 * request's base URL, or the configured public one); `ctrlAddress` is where routers dial its control channel, the
 * address their enrollment JWTs name. It has no certificate of its own (TLS ends at the managed front door), so
 * `certPem` and `fingerprint` are empty.
 */
export function controllerView(deps: Deps, baseUrl: string, api: Api) {
  const address = (path: string) => [{ url: `${baseUrl}${path}`, version: 'v1' }];
  const since = deps.config.buildDate;
  return {
    id: CONTROLLER_ID,
    createdAt: since,
    updatedAt: since,
    tags: {},
    _links: selfLinks('controllers', CONTROLLER_ID),
    name: new URL(baseUrl).host,
    certPem: '',
    fingerprint: '',
    isOnline: true,
    lastJoinedAt: since,
    // The client view keeps only the client API's address and leaves out the control channel, as the reference does.
    apiAddresses:
      api === 'client'
        ? { 'edge-client': address(API_BASE_PATHS.client) }
        : {
            'edge-client': address(API_BASE_PATHS.client),
            'edge-management': address(API_BASE_PATHS.management),
            fabric: address(API_BASE_PATHS.fabric),
          },
    ...(api === 'management' ? { ctrlAddress: ctrlAddressOf(deps.config.ctrlAddress, baseUrl) } : {}),
  };
}

/** `GET /controllers` on both APIs: this deployment, filtered and paged like any list. */
export const listControllers: Operation = async (request, deps) => {
  const params = await parseListParams(request.query, CONTROLLER_FILTERABLE);
  const page = pageInMemory([controllerView(deps, request.baseUrl, request.api)], params, CONTROLLER_FILTERABLE);
  return list(page.items, page.pagination, Object.keys(CONTROLLER_FILTERABLE));
};
