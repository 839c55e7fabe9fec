import type { EdgeRouter } from '#shared/entities/edge-router.ts';
import type { TransitRouter } from '#shared/entities/router.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';
import type { RouterStatus } from '#shared/views/router-status.ts';

/**
 * A router, edge or transit, as the fabric API shows it (the reference's `routerDetail`): `connected` while its
 * control channel's lease runs, and the build it reported then (`versionInfo`, absent while it is offline, as the
 * reference shows only a connected router's). `listenerAddresses` are the router's link listeners, which its hello
 * reports and the control channel does not keep yet: none are shown. A router not enrolled has no fingerprint (null,
 * as the reference sends it).
 */
export function fabricRouterView(router: EdgeRouter | TransitRouter, status: RouterStatus) {
  const { id, createdAt, updatedAt, tags, name, fingerprint, cost, noTraversal, disabled } = router;
  const { version, revision, buildDate, os, arch } = status;
  return {
    id,
    createdAt,
    updatedAt,
    tags,
    _links: selfLinks('routers', id, { terminators: 'terminators' }),
    name,
    fingerprint,
    connected: status.isOnline,
    cost,
    noTraversal,
    disabled,
    listenerAddresses: [],
    ...(status.isOnline ? { versionInfo: { version, revision, buildDate, os, arch } } : {}),
  };
}
