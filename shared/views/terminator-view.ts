import type { Terminator } from '../entities/terminator.ts';
import { entityRef, selfLinks } from './entity-ref.ts';
import type { NameLookup } from './name-lookup.ts';

/** How a terminator's references are named: one lookup per page, shared by its terminators. */
export interface TerminatorNames {
  readonly service: NameLookup;
  readonly edgeRouter: NameLookup;
  readonly transitRouter: NameLookup;
}

/** A terminator with its service and router as EntityRefs; the hosting identity's secret is never shown. */
export async function terminatorView(terminator: Terminator, names: TerminatorNames) {
  const { identitySecret: _secret, edgeRouterId, transitRouterId: _transit, service, router, ...rest } = terminator;
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
