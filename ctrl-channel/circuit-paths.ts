import { randomInt } from 'node:crypto';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { transitRouters } from '#shared/entities/router.ts';
import type { Terminator } from '#shared/entities/terminator.ts';
import { usableTerminators } from '#shared/store/usable-terminators.ts';
import { CircuitFailure } from './circuit-messages.ts';
import type { ControlContext } from './control-plane.ts';
import { MAX_PATH_COST, type RouterCost, type RouterPath, shortestPath } from './router-paths.ts';

/** Required first, failed last: the reference's precedence bands, of which a lower one always loses. */
const PRECEDENCE_RANK: Readonly<Record<Terminator['precedence'], number>> = { required: 0, default: 1, failed: 2 };

/** Where a circuit goes: the terminator it ends at, and the routers (and links) from the dialer's router to it. */
export interface ChosenPath {
  readonly terminator: Terminator;
  readonly path: RouterPath;
}

/**
 * The terminator a circuit from a router ends at, and the path to it, as the reference's `selectPath` chooses them:
 * the service's terminators on online routers (`usableTerminators`), of the SDK instance the dial names when it names
 * one (the reference's terminator `identity` is the hosting SDK's instance id); each weighed by its route cost, its
 * own cost plus the cost of the cheapest path to its router (`router-paths.ts`, capped as the reference caps it),
 * within its precedence band; one of the best equals at random, so hosts share the load. A terminator on the dialing
 * router costs no path, so a one-router circuit is chosen as it always was. Routers' costs are read only when a
 * terminator is on another router.
 */
export async function choosePath(
  context: ControlContext,
  ingressId: string,
  serviceId: string,
  instanceId: string,
): Promise<ChosenPath> {
  const online = await usableTerminators(context.deps, serviceId, { instanceId: instanceId || undefined });
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
  const reachable = online.flatMap((terminator) => {
    const path = pathTo(terminator.router);
    return path ? [{ terminator, path, cost: terminator.cost + Math.min(path.cost, MAX_PATH_COST) }] : [];
  });
  reachable.sort(
    (a, b) =>
      PRECEDENCE_RANK[a.terminator.precedence] - PRECEDENCE_RANK[b.terminator.precedence] ||
      a.cost - b.cost ||
      (a.terminator.id < b.terminator.id ? -1 : a.terminator.id > b.terminator.id ? 1 : 0),
  );
  const [best] = reachable;
  if (!best) {
    const routers = [...new Set(online.map((terminator) => terminator.router))];
    throw new CircuitFailure(
      `no path to service ${serviceId} from router ${ingressId}: no usable links reach its terminators' routers (${routers.join(', ')})`,
    );
  }
  const equals = reachable.filter(
    (candidate) => candidate.terminator.precedence === best.terminator.precedence && candidate.cost === best.cost,
  );
  const chosen = equals[randomInt(equals.length)] ?? best;
  return { terminator: chosen.terminator, path: chosen.path };
}

/** Every online router's cost and traversal flag, from its stored document (edge and transit routers alike). */
async function routerCosts(context: ControlContext): Promise<Map<string, RouterCost>> {
  const online = context.presence.online();
  const idsOf = (collection: string) =>
    online.filter((presence) => presence.collection === collection).map((presence) => presence.routerId);
  const [edge, transit] = await Promise.all([
    context.deps.store.getMany(edgeRouters, idsOf('edge-routers')),
    context.deps.store.getMany(transitRouters, idsOf('routers')),
  ]);
  const costs = new Map<string, RouterCost>();
  for (const router of [...edge, ...transit]) {
    costs.set(router.id, { cost: router.cost, noTraversal: router.noTraversal });
  }
  return costs;
}
