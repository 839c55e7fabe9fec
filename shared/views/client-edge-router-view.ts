import type { EdgeRouter } from '../entities/edge-router.ts';
import { selfLinks } from './entity-ref.ts';

/**
 * What the client API shows of an edge router (`commonEdgeRouterProperties`): no enrollment, fingerprint or role
 * attributes. No router process reports to this controller yet, so each shows offline with no listeners.
 */
export function clientEdgeRouterView(router: EdgeRouter) {
  return {
    name: router.name,
    hostname: '',
    supportedProtocols: {},
    syncStatus: 'SYNC_UNKNOWN',
    isOnline: false,
    cost: router.cost,
    noTraversal: router.noTraversal,
    disabled: router.disabled,
    appData: router.appData,
  };
}

/** An edge router of `GET /current-identity/edge-routers`: the client fields with the router's id and times. */
export function currentIdentityEdgeRouterView(router: EdgeRouter) {
  return {
    id: router.id,
    createdAt: router.createdAt,
    updatedAt: router.updatedAt,
    tags: router.tags,
    _links: selfLinks('edge-routers', router.id),
    ...clientEdgeRouterView(router),
  };
}
