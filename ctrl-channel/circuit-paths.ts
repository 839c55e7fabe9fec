import { edgeRouters } from '#shared/entities/edge-router.ts';
import { transitRouters } from '#shared/entities/router.ts';
import type { Terminator } from '#shared/entities/terminator.ts';
import { storedTerminatorsOf, usableOf } from '#shared/store/usable-terminators.ts';
import type { ChannelLog } from './channel-log.ts';
import { CircuitFailure } from './circuit-messages.ts';
import type { ControlContext } from './control-plane.ts';
import { MAX_PATH_COST, type RouterCost, type RouterPath, shortestPath } from './router-paths.ts';
import type { Chosen } from './terminator-choice.ts';

/**
 * Where a circuit goes: the terminator it ends at, the routers (and links) from the dialer's router to it, and the
 * strategy's choice (whose events, the route's success or failure, feed the endpoint's costs).
 */
export interface ChosenPath {
  readonly terminator: Terminator;
  readonly path: RouterPath;
  readonly chosen: Chosen<Terminator>;
}

/** What a dial asks of the choice: the service and its strategy, the SDK instance it names, the dialer's peer data. */
export interface PathRequest {
  readonly serviceId: string;
  readonly terminatorStrategy: string;
  readonly instanceId: string;
  readonly asked: ReadonlyMap<number, Buffer>;
}

/**
 * The terminator a circuit from a router ends at, and the path to it, as the reference's `selectPath` chooses them:
 * the service's terminators on online routers (`usableOf`), of the SDK instance the dial names, or without one when
 * it names none (the reference's terminator `identity` is the hosting SDK's instance id), those a path reaches; the
 * service's terminator strategy picks one (`terminator-choice.ts`), each weighed by its own cost, what the endpoint
 * learnt of it and the cost of the cheapest path to its router (`router-paths.ts`, capped as the reference caps it),
 * within its precedence band. A terminator on the dialing router costs no path, so a one-router circuit is chosen as
 * it always was. Routers' costs are needed only when a terminator is on another router.
 *
 * Nothing is read from the table while nothing changed: the service's terminators and the routers' costs are kept in
 * memory until a notice drops them (`terminator-cache.ts`, `router-cost-cache.ts`), and a router is online as the
 * endpoint's presence knows it (`router-presence.ts`: connected here, or its connection told by the change log and
 * read again every few seconds), as the paths between routers already take it.
 */
export async function choosePath(
  context: ControlContext,
  ingressId: string,
  request: PathRequest,
  log: Pick<ChannelLog, 'warn'>,
): Promise<ChosenPath> {
  const { serviceId, instanceId } = request;
  // Of the instance the dial names, or, naming none, only those bound without one (the reference's `selectPath` keeps
  // a terminator whose instance id equals the dial's, empty included): an addressable host is dialed by its name.
  const ofService = await context.terminatorCache.ofService(serviceId, () =>
    storedTerminatorsOf(context.deps.store, serviceId),
  );
  const online = usableOf(ofService, { instanceId: instanceId || undefined }, (terminator) =>
    context.presence.isOnline(terminator.router),
  ).filter((terminator) => instanceId !== '' || !terminator.identity);
  if (online.length === 0) {
    throw new CircuitFailure(
      `service ${serviceId} has no terminators${instanceId ? ` for instance ${instanceId}` : ''}`,
    );
  }
  const remote = online.some((terminator) => terminator.router !== ingressId);
  const costs = remote ? await routerCosts(context) : new Map<string, RouterCost>();
  const paths = new Map<string, RouterPath | undefined>();
  const pathTo = (routerId: string) => {
    if (!paths.has(routerId)) {
      paths.set(
        routerId,
        shortestPath(context.linkGraph, (id) => costs.get(id), ingressId, routerId),
      );
    }
    return paths.get(routerId);
  };
  const reachable = online.filter((terminator) => pathTo(terminator.router) !== undefined);
  if (reachable.length === 0) {
    const routers = [...new Set(online.map((terminator) => terminator.router))];
    throw new CircuitFailure(
      `no path to service ${serviceId} from router ${ingressId}: no usable links reach its terminators' routers (${routers.join(', ')})`,
    );
  }
  const chosen = context.terminatorChoice.choose(
    { id: serviceId, terminatorStrategy: request.terminatorStrategy },
    reachable,
    request.asked,
    log,
    (terminator) => Math.min(pathTo(terminator.router)!.cost, MAX_PATH_COST),
  );
  return { terminator: chosen.terminator, path: pathTo(chosen.terminator.router)!, chosen };
}

/**
 * Every online router's cost and traversal flag: kept in memory, else from its stored document (edge and transit
 * routers alike).
 */
async function routerCosts(context: ControlContext): Promise<Map<string, RouterCost>> {
  const online = context.presence.online();
  return context.routerCosts.costsOf(
    online.map((presence) => presence.routerId),
    async (missing) => {
      const wanted = new Set(missing);
      const idsOf = (collection: string) =>
        online
          .filter((presence) => presence.collection === collection && wanted.has(presence.routerId))
          .map((presence) => presence.routerId);
      const [edge, transit] = await Promise.all([
        context.deps.store.getMany(edgeRouters, idsOf('edge-routers')),
        context.deps.store.getMany(transitRouters, idsOf('routers')),
      ]);
      return new Map(
        [...edge, ...transit].map((router) => [router.id, { cost: router.cost, noTraversal: router.noTraversal }]),
      );
    },
  );
}
