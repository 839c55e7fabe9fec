import { type LinkRecord, linkCostOf } from '#shared/store/link-items.ts';
import type { LinkGraph } from './link-graph.ts';

/**
 * The least a router adds to a path through it, whatever its own cost says (the reference's `MinRouterCost`,
 * `config_network.go`): so that a path of more routers costs more even when every router costs 0.
 */
export const MIN_ROUTER_COST = 10;
/** The most a path's cost weighs in a terminator's route cost (the reference's `newPathAndCost` cap). */
export const MAX_PATH_COST = 1 << 20;

/** What a path search needs of a router: its cost, and whether circuits may cross it. */
export interface RouterCost {
  readonly cost: number;
  readonly noTraversal: boolean;
}

/** The routers a circuit runs through, ingress first, and the link between each two (one fewer). */
export interface RouterPath {
  readonly nodes: readonly string[];
  readonly links: readonly string[];
  /** Each link's cost plus each router's after the first (at least {@link MIN_ROUTER_COST}). */
  readonly cost: number;
}

/**
 * The cheapest path from one router to another over the usable links (`LinkGraph.neighbours`: Connected, both
 * routers online, the cheapest link between each two), as the reference's `shortestPath` finds it (Dijkstra): a step
 * to a router costs the link's cost plus the router's, at least {@link MIN_ROUTER_COST}; the source's own cost is not
 * counted; a `noTraversal` router (or one whose cost is unknown: not a router this endpoint can read) is never
 * crossed, only ended at. A router to itself is the one-router path of cost 0; undefined when no path exists.
 */
export function shortestPath(
  graph: Pick<LinkGraph, 'neighbours'>,
  costOf: (routerId: string) => RouterCost | undefined,
  sourceId: string,
  destId: string,
): RouterPath | undefined {
  if (sourceId === destId) return { nodes: [sourceId], links: [], cost: 0 };
  const distance = new Map<string, number>([[sourceId, 0]]);
  const previous = new Map<string, { routerId: string; link: LinkRecord }>();
  const visited = new Set<string>();
  for (;;) {
    // The cheapest router reached and not yet visited (routers are few: a scan beats a heap here).
    let current: string | undefined;
    for (const [routerId, cost] of distance) {
      if (!visited.has(routerId) && (current === undefined || cost < distance.get(current)!)) current = routerId;
    }
    if (current === undefined) return undefined;
    if (current === destId) break;
    visited.add(current);
    // Only the source and the destination may be a router circuits do not cross.
    if (current !== sourceId && !traversable(costOf(current))) continue;
    for (const { routerId, link } of graph.neighbours(current)) {
      if (visited.has(routerId)) continue;
      const routerCost = costOf(routerId);
      if (routerCost === undefined) continue;
      const cost = distance.get(current)! + linkCostOf(link) + Math.max(routerCost.cost, MIN_ROUTER_COST);
      if (cost < (distance.get(routerId) ?? Number.POSITIVE_INFINITY)) {
        distance.set(routerId, cost);
        previous.set(routerId, { routerId: current, link });
      }
    }
  }
  const nodes = [destId];
  const links: string[] = [];
  for (let step = previous.get(destId); step; step = previous.get(step.routerId)) {
    nodes.unshift(step.routerId);
    links.unshift(step.link.id);
  }
  return { nodes, links, cost: distance.get(destId)! };
}

const traversable = (router: RouterCost | undefined) => router !== undefined && !router.noTraversal;
