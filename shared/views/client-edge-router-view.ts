import type { EdgeRouter } from '../entities/edge-router.ts';
import { selfLinks } from './entity-ref.ts';
import type { RouterStatus } from './router-status.ts';

/** The fields of an edge router the client API shows (a document, or the router's id-order record). */
export type ClientEdgeRouterFields = Pick<EdgeRouter, 'name' | 'cost' | 'noTraversal' | 'disabled' | 'appData'>;

/**
 * What the client API shows of an edge router (`commonEdgeRouterProperties`): no enrollment, fingerprint or role
 * attributes; whether it is online, its sync status, its host name and listeners from its control channel
 * (`router-status.ts`).
 */
export function clientEdgeRouterView(router: ClientEdgeRouterFields, status: RouterStatus) {
  return {
    name: router.name,
    hostname: status.hostname,
    supportedProtocols: status.supportedProtocols,
    syncStatus: status.syncStatus,
    isOnline: status.isOnline,
    cost: router.cost,
    noTraversal: router.noTraversal,
    disabled: router.disabled,
    appData: router.appData,
  };
}

/** An edge router of `GET /current-identity/edge-routers`: the client fields with the router's id and times. */
export function currentIdentityEdgeRouterView(router: EdgeRouter, status: RouterStatus) {
  return {
    id: router.id,
    createdAt: router.createdAt,
    updatedAt: router.updatedAt,
    tags: router.tags,
    _links: selfLinks('edge-routers', router.id),
    ...clientEdgeRouterView(router, status),
  };
}
