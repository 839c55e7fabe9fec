import type { Terminator } from '#shared/entities/terminator.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { isConnectedAt, readRouterConnections } from '#shared/store/router-connections.ts';
import { storedTerminatorsOf, type TerminatorChoice, usableOf } from '#shared/store/usable-terminators.ts';

/**
 * The terminators a circuit to a service may use now as the table tells it (`usableOf`: a router connected while its
 * control channel's lease runs): what a test checks a router's Bind against. The endpoint itself answers dials from
 * what it keeps in memory (`ctrl-channel/terminator-cache.ts`, its routers' presence).
 */
export async function usableTerminators(
  deps: Pick<Deps, 'store' | 'now'>,
  serviceId: string,
  choice: TerminatorChoice = {},
): Promise<Terminator[]> {
  const ofService = await storedTerminatorsOf(deps.store, serviceId);
  const routerIdsOf = (edge: boolean) =>
    ofService.filter((terminator) => Boolean(terminator.edgeRouterId) === edge).map((terminator) => terminator.router);
  const [edge, transit] = await Promise.all([
    readRouterConnections(deps.store, 'edge-routers', routerIdsOf(true)),
    readRouterConnections(deps.store, 'routers', routerIdsOf(false)),
  ]);
  const now = deps.now();
  return usableOf(ofService, choice, (terminator) =>
    isConnectedAt((terminator.edgeRouterId ? edge : transit).get(terminator.router), now),
  );
}
