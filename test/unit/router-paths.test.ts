import { describe, expect, it } from 'vitest';
import { forwardsOf } from '#ctrl-channel/circuit-messages.ts';
import { MIN_ROUTER_COST, type RouterCost, shortestPath } from '#ctrl-channel/router-paths.ts';
import type { LinkRecord } from '#shared/store/link-items.ts';

/** A link of a given cost (its static cost; latencies 0), usable both ways as the graph's neighbours give it. */
const link = (id: string, from: string, to: string, cost: number) =>
  ({ id, sourceRouterId: from, destRouterId: to, staticCost: cost, sourceLatency: 0, destLatency: 0 }) as LinkRecord;

function graphOf(links: readonly LinkRecord[]) {
  return {
    neighbours: (routerId: string) =>
      links.flatMap((each) =>
        each.sourceRouterId === routerId
          ? [{ routerId: each.destRouterId, link: each }]
          : each.destRouterId === routerId
            ? [{ routerId: each.sourceRouterId, link: each }]
            : [],
      ),
  };
}

const costs =
  (table: Record<string, Partial<RouterCost>>) =>
  (routerId: string): RouterCost | undefined =>
    table[routerId] ? { cost: 0, noTraversal: false, ...table[routerId] } : undefined;

describe('shortestPath: the reference Dijkstra over usable links', () => {
  const routers = costs({ a: {}, b: {}, c: {}, d: {} });

  it('is the one-router path of cost 0 from a router to itself', () => {
    expect(shortestPath(graphOf([]), routers, 'a', 'a')).toEqual({ nodes: ['a'], links: [], cost: 0 });
  });

  it("adds each link's cost and each router's after the first, at least the minimum router cost", () => {
    const graph = graphOf([link('ab', 'a', 'b', 5), link('bc', 'c', 'b', 7)]);
    expect(shortestPath(graph, routers, 'a', 'c')).toEqual({
      nodes: ['a', 'b', 'c'],
      links: ['ab', 'bc'],
      cost: 5 + MIN_ROUTER_COST + 7 + MIN_ROUTER_COST,
    });
    const dear = costs({ a: { cost: 1000 }, b: { cost: 40 }, c: {} });
    expect(shortestPath(graph, dear, 'a', 'c')?.cost).toBe(5 + 40 + 7 + MIN_ROUTER_COST);
  });

  it('takes the cheaper of two ways, a longer one when its links cost less', () => {
    const graph = graphOf([
      link('ad', 'a', 'd', 500),
      link('ab', 'a', 'b', 1),
      link('bc', 'b', 'c', 1),
      link('cd', 'c', 'd', 1),
    ]);
    expect(shortestPath(graph, routers, 'a', 'd')?.nodes).toEqual(['a', 'b', 'c', 'd']);
  });

  it('never crosses a noTraversal router (or one whose cost is unknown), but may start or end at one', () => {
    const graph = graphOf([link('ab', 'a', 'b', 1), link('bc', 'b', 'c', 1)]);
    const closed = costs({ a: { noTraversal: true }, b: { noTraversal: true }, c: { noTraversal: true } });
    expect(shortestPath(graph, closed, 'a', 'c')).toBeUndefined();
    expect(shortestPath(graph, closed, 'a', 'b')?.nodes).toEqual(['a', 'b']);
    expect(shortestPath(graph, costs({ a: {}, c: {} }), 'a', 'c')).toBeUndefined();
    expect(shortestPath(graph, routers, 'a', 'x')).toBeUndefined();
  });
});

describe('forwardsOf: each router its forwards (B.3)', () => {
  const addresses = { circuitId: 'c', attempt: 0, ingressId: 'in', egressId: 'out' };

  it('joins ingress and egress on one router', () => {
    expect(forwardsOf(addresses, [])).toEqual([
      [
        { srcAddress: 'in', dstAddress: 'out', dstType: 'End' },
        { srcAddress: 'out', dstAddress: 'in', dstType: 'Start' },
      ],
    ]);
  });

  it('forwards link to link on each transit router of a longer path', () => {
    const forwards = forwardsOf(addresses, ['l1', 'l2', 'l3']);
    expect(forwards).toHaveLength(4);
    expect(forwards[0]).toEqual([
      { srcAddress: 'in', dstAddress: 'l1', dstType: 'Link' },
      { srcAddress: 'l1', dstAddress: 'in', dstType: 'Start' },
    ]);
    expect(forwards[2]).toEqual([
      { srcAddress: 'l2', dstAddress: 'l3', dstType: 'Link' },
      { srcAddress: 'l3', dstAddress: 'l2', dstType: 'Link' },
    ]);
    expect(forwards[3]).toEqual([
      { srcAddress: 'out', dstAddress: 'l3', dstType: 'Link' },
      { srcAddress: 'l3', dstAddress: 'out', dstType: 'End' },
    ]);
  });
});
