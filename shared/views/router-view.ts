import type { EdgeRouter } from '../entities/edge-router.ts';
import type { TransitRouter } from '../entities/router.ts';
import type { Deps } from '../ports/deps.ts';
import { selfLinks } from './entity-ref.ts';
import { type RouterStatus, withRouterStatuses } from './router-status.ts';

/**
 * What a router does not report to this controller yet (a certificate awaiting verification): shown empty, rather
 * than as anything it never said.
 */
const UNREPORTED = {
  unverifiedCertPem: null,
  unverifiedFingerprint: null,
} as const;

/** The enrollment a router has outstanding, with the JWT signed when it was made. */
function enrollmentOf(router: TransitRouter | EdgeRouter) {
  return {
    enrollmentToken: router.enrollmentToken,
    enrollmentCreatedAt: router.enrollmentCreatedAt,
    enrollmentExpiresAt: router.enrollmentExpiresAt,
    enrollmentJwt: router.enrollmentJwt ?? null,
  };
}

/**
 * `/transit-routers/{id}` and `/routers/{id}`: the reference shows both under `./transit-routers/<id>`, online while
 * its control channel is connected (`router-status.ts`, as an edge router's).
 */
export function transitRouterView(router: TransitRouter, status: RouterStatus) {
  return {
    ...router,
    ...enrollmentOf(router),
    ...UNREPORTED,
    isOnline: status.isOnline,
    _links: selfLinks('transit-routers', router.id),
  };
}

/** Transit routers' views with whether each is online, read in one batch for the page. */
export function transitRouterViews(deps: Deps, routers: readonly TransitRouter[]) {
  return withRouterStatuses(deps, 'routers', routers, transitRouterView);
}

/**
 * The management view of an edge router, with its control channel's status (`router-status.ts`): whether it is
 * online, its sync status, the build it reported, its host name and listeners (empty while it is not connected).
 */
export function edgeRouterView(router: EdgeRouter, status: RouterStatus) {
  return {
    ...router,
    ...enrollmentOf(router),
    ...UNREPORTED,
    ...status,
    certPem: router.certPem ?? null,
    _links: selfLinks('edge-routers', router.id, {
      'edge-router-policies': 'edge-router-policies',
      identities: 'identities',
      'service-edge-router-policies': 'service-edge-router-policies',
      services: 'services',
    }),
  };
}

/** Edge routers' management views with their statuses, read in one batch for the page. */
export function edgeRouterViews(deps: Deps, routers: readonly EdgeRouter[]) {
  return withRouterStatuses(deps, 'edge-routers', routers, edgeRouterView);
}
