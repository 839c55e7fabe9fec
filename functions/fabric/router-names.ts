import { edgeRouters } from '#shared/entities/edge-router.ts';
import { transitRouters } from '#shared/entities/router.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { type NameLookup, nameLookup } from '#shared/views/name-lookup.ts';

/**
 * Names routers of either type by id, each read once per lookup (one per page), for what names a router without
 * saying its type (a link's ends, a circuit's path): an edge router's name, else a transit router's.
 */
export function routerNames(deps: Deps): NameLookup {
  const edge = nameLookup(deps, edgeRouters);
  const transit = nameLookup(deps, transitRouters);
  return async (id) => (await edge(id)) || transit(id);
}
