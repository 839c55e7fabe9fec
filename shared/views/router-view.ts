import type { EdgeRouter } from '../entities/edge-router.ts';
import type { TransitRouter } from '../entities/router.ts';
import { selfLinks } from './entity-ref.ts';

/**
 * What only a running router reports (its connection, listeners, host and build): no router process connects to this
 * controller yet, so every router shows as offline with nothing reported, rather than as anything it never said.
 */
const UNREPORTED = {
  isOnline: false,
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

/** `/transit-routers/{id}` and `/routers/{id}`: the reference shows both under `./transit-routers/<id>`. */
export function transitRouterView(router: TransitRouter) {
  return { ...router, ...enrollmentOf(router), ...UNREPORTED, _links: selfLinks('transit-routers', router.id) };
}

/** The management view of an edge router. */
export function edgeRouterView(router: EdgeRouter) {
  return {
    ...router,
    ...enrollmentOf(router),
    ...UNREPORTED,
    hostname: '',
    supportedProtocols: {},
    syncStatus: 'SYNC_UNKNOWN',
    certPem: router.certPem ?? null,
    // The documents require these of an edge router's detail; the build a router reports is unknown until it does.
    os: '',
    arch: '',
    version: '',
    revision: '',
    buildDate: '',
    _links: selfLinks('edge-routers', router.id, {
      'edge-router-policies': 'edge-router-policies',
      identities: 'identities',
      'service-edge-router-policies': 'service-edge-router-policies',
      services: 'services',
    }),
  };
}
