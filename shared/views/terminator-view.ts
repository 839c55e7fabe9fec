import { edgeRouters } from '../entities/edge-router.ts';
import { transitRouters } from '../entities/router.ts';
import { services } from '../entities/service.ts';
import type { Terminator } from '../entities/terminator.ts';
import type { Deps } from '../ports/deps.ts';
import { entityRef, selfLinks } from './entity-ref.ts';
import { type NameLookup, nameLookup } from './name-lookup.ts';

/** How a terminator's references are named: one lookup per page, shared by its terminators. */
export interface TerminatorNames {
  readonly service: NameLookup;
  readonly edgeRouter: NameLookup;
  readonly transitRouter: NameLookup;
}

export function terminatorNames(deps: Deps): TerminatorNames {
  return {
    service: nameLookup(deps, services),
    edgeRouter: nameLookup(deps, edgeRouters),
    transitRouter: nameLookup(deps, transitRouters),
  };
}

/**
 * A terminator with its service and router as EntityRefs; the hosting identity's secret, and what a router's Bind keeps
 * of its SDK (host, peer data, connection), are never shown.
 */
export async function terminatorView(terminator: Terminator, names: TerminatorNames) {
  const {
    identitySecret: _secret,
    hostId: _host,
    peerData: _peerData,
    connectionId: _connection,
    edgeRouterId,
    transitRouterId: _transit,
    service,
    router,
    ...rest
  } = terminator;
  const [serviceName, routerName] = await Promise.all([
    names.service(service),
    edgeRouterId ? names.edgeRouter(router) : names.transitRouter(router),
  ]);
  return {
    ...rest,
    _links: selfLinks('terminators', terminator.id),
    serviceId: service,
    service: entityRef('services', service, serviceName),
    routerId: router,
    router: entityRef(edgeRouterId ? 'edge-routers' : 'routers', router, routerName),
    // Without routers reporting load, the cost in use is the one configured.
    dynamicCost: terminator.cost,
  };
}
