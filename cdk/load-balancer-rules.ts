import { resourcesOf } from '#shared/routes/resource-paths.ts';
import { API_BASE_PATHS, type HttpMethod, type OperationGroup, type Route } from '#shared/routes/route.ts';

/**
 * One listener rule of the load balancer: a request whose path matches one of `paths` (ALB path patterns: `*` any
 * characters, `/` included) and, when `methods` is given, whose method is one of them, goes to `group`'s function.
 * Rules are evaluated in order; the first that matches wins.
 */
export interface LoadBalancerRule {
  readonly group: OperationGroup;
  readonly paths: readonly string[];
  readonly methods?: readonly (HttpMethod | 'OPTIONS')[];
}

/**
 * The last rule: a browser's preflight (`OPTIONS`) that no rule above took (those with method conditions name only
 * the route table's methods) goes to one function, which answers it for any path a route serves
 * (`albPreflightAnswer`), as API Gateway's mock integrations do. Last, so that it costs nothing to other requests.
 */
export const PREFLIGHT_RULE: LoadBalancerRule = { group: 'info', paths: ['/*'], methods: ['OPTIONS'] };

/** The load balancer's limits on rules (Elastic Load Balancing's quotas, "Listener rules"). */
export const LISTENER_RULE_LIMITS = {
  /** Comparison strings of one condition (path patterns, or methods). */
  valuesPerCondition: 3,
  /** Comparison strings of one rule, all its conditions together. */
  valuesPerRule: 5,
  /** Rules of a load balancer besides the default ones. */
  rulesPerLoadBalancer: 100,
} as const;

/**
 * The groups an enrolled fleet calls most, first: the poll and the API session's refresh, session and posture calls,
 * the service list, logins, the version check. The rest follow in the route table's order.
 */
const TRAFFIC_ORDER: readonly OperationGroup[] = ['poll', 'sessions', 'client', 'authentication', 'info'];

/**
 * What every enrolled SDK sends, by its path under the client API, busiest first (the C SDK's timers): the poll
 * (`GET /current-api-session/service-updates`, a minute), the API session's refresh (`GET /current-api-session`),
 * Dial sessions (`POST /sessions`), the service list (`GET /services`) and the login (`POST /authenticate`, by
 * certificate). The rules that take them come first, at both the prefixed and the bare paths: a load balancer bills
 * rule evaluations past the tenth of each request, and a fleet's month is mostly these.
 */
export const FLEET_PATHS = [
  '/current-api-session/service-updates',
  '/current-api-session',
  '/sessions',
  '/services',
  '/authenticate',
] as const;

/** Whether an ALB path pattern (`*` any characters, `/` included; nothing else special here) matches `path`. */
function patternMatches(pattern: string, path: string): boolean {
  const [first = '', ...rest] = pattern.split('*');
  if (rest.length === 0) return pattern === path;
  let at = first.length;
  if (!path.startsWith(first)) return false;
  for (const [index, part] of rest.entries()) {
    if (index === rest.length - 1) return path.length - part.length >= at && path.endsWith(part);
    const found = path.indexOf(part, at);
    if (found === -1) return false;
    at = found + part.length;
  }
  return true;
}

/** The rank in {@link FLEET_PATHS} of the first fleet path a client API pattern matches, at either base path. */
function fleetRank(pattern: string): number | undefined {
  const rank = FLEET_PATHS.findIndex(
    (path) => patternMatches(pattern, path) || patternMatches(pattern, `${API_BASE_PATHS.client}${path}`),
  );
  return rank === -1 ? undefined : rank;
}

const trafficRank = (group: OperationGroup) => {
  const rank = TRAFFIC_ORDER.indexOf(group);
  return rank === -1 ? TRAFFIC_ORDER.length - 0.5 : rank;
};

/** A node of the tree of resource templates, one path segment per level (`{id}` segments are one child). */
interface PathNode {
  readonly segment: string;
  readonly children: Map<string, PathNode>;
  /** The groups of the routes served at exactly this resource, by method. */
  readonly methods: Map<HttpMethod, OperationGroup>;
}

const isParameter = (segment: string) => segment.startsWith('{');

function pathTree(routes: readonly Route[]): PathNode {
  const root: PathNode = { segment: '', children: new Map(), methods: new Map() };
  for (const route of routes) {
    for (const { resource } of resourcesOf(route)) {
      let node = root;
      for (const segment of resource.split('/').filter((part) => part !== '')) {
        // Every parameter at one level is the same child, as API Gateway has one `{…}` resource per level.
        const key = isParameter(segment) ? '{}' : segment;
        let child = node.children.get(key);
        if (!child) {
          child = { segment: isParameter(segment) ? '*' : segment, children: new Map(), methods: new Map() };
          node.children.set(key, child);
        }
        node = child;
      }
      node.methods.set(route.method, route.group);
    }
  }
  return root;
}

function groupsUnder(node: PathNode, into = new Set<OperationGroup>()): Set<OperationGroup> {
  for (const group of node.methods.values()) into.add(group);
  for (const child of node.children.values()) groupsUnder(child, into);
  return into;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The rules of one resource served by several groups: each other group's methods first, then the main group's. */
function exactRules(path: string, methods: ReadonlyMap<HttpMethod, OperationGroup>): LoadBalancerRule[] {
  const byGroup = new Map<OperationGroup, HttpMethod[]>();
  for (const [method, group] of methods) byGroup.set(group, [...(byGroup.get(group) ?? []), method]);
  // The group with the most methods takes the rest of the methods too, so that it answers 405 for those.
  const [main] = [...byGroup].sort(([, a], [, b]) => b.length - a.length)[0] ?? [];
  if (main === undefined) return [];
  const rules: LoadBalancerRule[] = [];
  for (const [group, groupMethods] of byGroup) {
    if (group === main) continue;
    for (const some of chunks(groupMethods, LISTENER_RULE_LIMITS.valuesPerCondition)) {
      rules.push({ group, paths: [path], methods: some });
    }
  }
  rules.push({ group: main, paths: [path] });
  return rules;
}

/**
 * The path patterns of a subtree served by one group: its own path and everything under it, as one `<path>*` where no
 * sibling's name begins with this one's (it would match the sibling's paths too), else as `<path>` and `<path>/*`. A
 * parameter's subtree is its own pattern, `<parent>/*`, which already matches every path below.
 */
function subtreePatterns(path: string, segment: string, siblings: readonly string[]): string[] {
  if (segment === '*') return [path];
  const prefixOfSibling = siblings.some((other) => other !== segment && other.startsWith(segment));
  return prefixOfSibling ? [path, `${path}/*`] : [`${path}*`];
}

interface Collected {
  /** Rules that match only paths of their own subtree: disjoint from every other, so packed in any order. */
  readonly disjoint: { group: OperationGroup; paths: string[] }[];
  /** Rules that only come before the rules of their resource's main group there (other groups' methods). */
  readonly methodRules: LoadBalancerRule[];
  /** Rules under a path parameter, whose `*` also matches `/`: kept in the order the tree gives. */
  readonly ordered: LoadBalancerRule[];
}

/**
 * Walks the tree. A subtree served by one group becomes one or two path patterns; a node whose subtree mixes groups
 * gets its own resource's rules and recurses, its literal children before its parameter child (whose patterns would
 * match the literal children's paths too, as API Gateway prefers a literal segment to a parameter).
 */
function collect(node: PathNode, path: string, siblings: readonly string[], underParameter: boolean, out: Collected) {
  const groups = groupsUnder(node);
  const [only] = groups;
  if (groups.size === 1 && only !== undefined && path !== '') {
    const patterns = subtreePatterns(path, node.segment, siblings);
    if (underParameter || node.segment === '*') out.ordered.push({ group: only, paths: patterns });
    else out.disjoint.push({ group: only, paths: patterns });
    return;
  }
  const children = [...node.children.values()];
  const literal = children.filter((child) => child.segment !== '*');
  const names = literal.map((child) => child.segment);
  for (const child of literal) collect(child, `${path}/${child.segment}`, names, underParameter, out);
  for (const child of children.filter((each) => each.segment === '*')) {
    collect(child, `${path}/*`, names, true, out);
  }
  if (node.methods.size > 0) {
    const rules = exactRules(path === '' ? '/' : path, node.methods);
    const main = rules.pop();
    if (underParameter) out.ordered.push(...rules, ...(main ? [main] : []));
    else {
      out.methodRules.push(...rules);
      if (main) out.disjoint.push({ group: main.group, paths: [...main.paths] });
    }
  }
}

/**
 * The listener rules that send each route of `routes` to its group's function, in priority order, as few as the
 * load balancer's limits allow: one path pattern per subtree of the path tree that a single group serves, patterns
 * of one group packed three to a rule where no other rule could match their paths, method conditions only where one
 * resource is served by several groups. A request no rule matches gets the listener's default answer.
 */
export function loadBalancerRules(routes: readonly Route[]): LoadBalancerRule[] {
  const out: Collected = { disjoint: [], methodRules: [], ordered: [] };
  collect(pathTree(routes), '', [], false, out);

  // Each rule a request passes costs (every evaluation past the first ten is billed load), so what clients send all
  // day comes first: the fleet's paths, then the client API's groups, busiest first, then the management API's.
  const packed: LoadBalancerRule[] = [];
  const bins = new Map<string, { group: OperationGroup; paths: string[]; rank: number }>();
  const fleetBins = new Map<OperationGroup, { group: OperationGroup; paths: [string, number][]; rank: number }>();
  for (const { group, paths } of out.disjoint) {
    for (const path of paths) {
      const management = path.startsWith(API_BASE_PATHS.management);
      const rank = management ? undefined : fleetRank(path);
      if (rank !== undefined) {
        const bin = fleetBins.get(group) ?? { group, paths: [], rank };
        fleetBins.set(group, { group, paths: [...bin.paths, [path, rank]], rank: Math.min(bin.rank, rank) });
        continue;
      }
      const key = `${management}:${group}`;
      const bin = bins.get(key) ?? {
        group,
        paths: [],
        rank: trafficRank(group) + (management ? TRAFFIC_ORDER.length : 0),
      };
      bins.set(key, { ...bin, paths: [...bin.paths, path] });
    }
  }
  for (const { group, paths } of [...fleetBins.values()].sort((a, b) => a.rank - b.rank)) {
    const busiestFirst = paths.sort(([, a], [, b]) => a - b).map(([path]) => path);
    for (const some of chunks(busiestFirst, LISTENER_RULE_LIMITS.valuesPerCondition))
      packed.push({ group, paths: some });
  }
  for (const { group, paths } of [...bins.values()].sort((a, b) => a.rank - b.rank)) {
    for (const some of chunks(paths, LISTENER_RULE_LIMITS.valuesPerCondition)) packed.push({ group, paths: some });
  }
  // Neighbours of one group without methods merge: no rule stands between them to be overtaken.
  const ordered: LoadBalancerRule[] = [];
  for (const rule of out.ordered) {
    const last = ordered.at(-1);
    if (
      last &&
      last.group === rule.group &&
      !last.methods &&
      !rule.methods &&
      last.paths.length + rule.paths.length <= LISTENER_RULE_LIMITS.valuesPerCondition
    ) {
      ordered[ordered.length - 1] = { group: rule.group, paths: [...last.paths, ...rule.paths] };
    } else ordered.push(rule);
  }
  const rules = [...out.methodRules, ...packed, ...ordered];
  if (routes.some((route) => route.group === PREFLIGHT_RULE.group)) rules.push(PREFLIGHT_RULE);
  if (rules.length > LISTENER_RULE_LIMITS.rulesPerLoadBalancer) {
    throw new Error(
      `The route table needs ${rules.length} listener rules, more than a load balancer's ${LISTENER_RULE_LIMITS.rulesPerLoadBalancer}`,
    );
  }
  return rules;
}
