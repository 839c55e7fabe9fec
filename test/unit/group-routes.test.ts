import { describe, expect, it } from 'vitest';
import { resourcesOf } from '#shared/routes/resource-paths.ts';
import type { OperationGroup, Route } from '#shared/routes/route.ts';
import { RouteMatcher } from '#shared/routes/route-matcher.ts';
import { ROUTES } from '#shared/routes/route-table.ts';

const GROUPS = [...new Set(ROUTES.map((route) => route.group))];
const key = (route: Route) => `${route.method} ${route.path} ${route.apis.join(',')}`;

/**
 * Each function matches requests against its own part of the route table (its bundle holds no other group's routes):
 * that part must be the whole of its group, and no group's path may be taken by another group's route when the whole
 * table matches it — else the load balancer's raw path would find a different route in the function than in the table.
 */
describe("a function's routes", () => {
  it.each(GROUPS)('the %s function serves every route of its group, and no other', async (group) => {
    const { routes } = (await import(`../../functions/${group}/handler.ts`)) as { routes: readonly Route[] };
    expect(routes.map(key).sort()).toEqual(
      ROUTES.filter((route) => route.group === group)
        .map(key)
        .sort(),
    );
  });

  it("finds, by a group's routes alone, the route the whole table finds for each path it sends to that group", () => {
    const whole = new RouteMatcher(ROUTES);
    const byGroup = new Map<OperationGroup, RouteMatcher>(
      GROUPS.map((group) => [group, new RouteMatcher(ROUTES.filter((route) => route.group === group))]),
    );
    const templates = [...new Set(ROUTES.flatMap((route) => resourcesOf(route).map(({ resource }) => resource)))].map(
      (resource) => resource.split('/').filter((segment) => segment !== ''),
    );
    // Every template's path with its parameters given a value no literal spells, and with each literal that another
    // template of its length has in a parameter's place (`/identities/summary` against `/identities/{id}`).
    const paths = new Set<string>();
    for (const template of templates) {
      const neutral = template.map((segment) => (segment.startsWith('{') ? 'value-of-a-parameter' : segment));
      paths.add(`/${neutral.join('/')}`);
      for (const other of templates.filter((candidate) => candidate.length === template.length)) {
        const crossed = template.map((segment, i) =>
          segment.startsWith('{') && !other[i]!.startsWith('{') ? other[i]! : neutral[i]!,
        );
        paths.add(`/${crossed.join('/')}`);
      }
    }
    const differences: string[] = [];
    for (const path of paths) {
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        const expected = whole.match(method, path);
        if (expected.kind !== 'found') continue;
        const found = byGroup.get(expected.route.group)!.match(method, path);
        if (found.kind !== 'found' || found.route !== expected.route) {
          differences.push(
            `${method} ${path}: ${expected.route.group} ${expected.route.operation}, alone ${found.kind}`,
          );
        }
      }
    }
    expect(paths.size).toBeGreaterThan(ROUTES.length);
    expect(differences).toEqual([]);
  });
});
