import { resourcesOf } from './resource-paths.ts';
import type { Api, Route } from './route.ts';

interface Template {
  readonly resource: string;
  readonly segments: readonly string[];
  readonly params: number;
  readonly routes: Map<string, { route: Route; api: Api }>;
}

export type RouteMatch =
  | {
      readonly kind: 'found';
      readonly route: Route;
      readonly api: Api;
      readonly resource: string;
      readonly pathParameters: Record<string, string>;
    }
  | { readonly kind: 'method-not-allowed' }
  | { readonly kind: 'not-found' };

const split = (path: string) => path.split('/').filter((segment) => segment !== '');

/** The reference serves `/edge/v1/...` as the client API, and any path outside `/edge` as un-prefixed client paths. */
export function canonicalPath(pathname: string): string {
  return pathname.startsWith('/edge/v1/') || pathname === '/edge/v1' ? `/edge/client/v1${pathname.slice(8)}` : pathname;
}

/**
 * The one place requests find their route: by the resource template API Gateway names in a proxy event
 * ({@link RouteMatcher.matchResource}), or by the raw path, as the local server and a load balancer's events give it
 * ({@link RouteMatcher.match}), the way API Gateway matches it: literal segments beat `{param}` segments, and a path
 * whose template exists under another method is a 405.
 */
export class RouteMatcher {
  private readonly templates: Template[] = [];
  private readonly byResource: ReadonlyMap<string, Template>;

  constructor(routes: readonly Route[]) {
    const byResource = new Map<string, Template>();
    for (const route of routes) {
      for (const { api, resource } of resourcesOf(route)) {
        let template = byResource.get(resource);
        if (!template) {
          const segments = split(resource);
          template = {
            resource,
            segments,
            params: segments.filter((s) => s.startsWith('{')).length,
            routes: new Map(),
          };
          byResource.set(resource, template);
        }
        template.routes.set(route.method, { route, api });
      }
    }
    // Most literal first, so `/identities/summary`-style literals win over `/identities/{id}`.
    this.templates = [...byResource.values()].sort((a, b) => a.params - b.params);
    this.byResource = byResource;
  }

  /** The route of a resource template (`/identities/{id}`); its path parameters are the event's own. */
  matchResource(method: string, resource: string, pathParameters: Record<string, string>): RouteMatch {
    const template = this.byResource.get(resource === '' ? '/' : resource);
    if (!template) return { kind: 'not-found' };
    const found = template.routes.get(method.toUpperCase());
    return found
      ? { kind: 'found', ...found, resource: template.resource, pathParameters }
      : { kind: 'method-not-allowed' };
  }

  match(method: string, path: string): RouteMatch {
    const segments = split(path);
    let methodMismatch = false;
    for (const template of this.templates) {
      const pathParameters = matchSegments(template.segments, segments);
      if (!pathParameters) continue;
      const found = template.routes.get(method.toUpperCase());
      if (found) return { kind: 'found', ...found, resource: template.resource, pathParameters };
      methodMismatch = true;
    }
    return methodMismatch ? { kind: 'method-not-allowed' } : { kind: 'not-found' };
  }
}

function matchSegments(template: readonly string[], path: readonly string[]): Record<string, string> | undefined {
  if (template.length !== path.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i++) {
    const expected = template[i]!;
    const actual = path[i]!;
    if (expected.startsWith('{') && expected.endsWith('}')) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(actual);
      } catch {
        return undefined;
      }
      params[expected.slice(1, -1)] = decoded;
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}
