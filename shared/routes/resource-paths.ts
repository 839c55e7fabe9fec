import { API_BASE_PATHS, type Api, type Route } from './route.ts';

/** One API Gateway resource template a route is served at, with the API it belongs to. */
export interface RouteResource {
  readonly api: Api;
  /** The full resource template, e.g. `/edge/management/v1/identities/{id}`. */
  readonly resource: string;
}

function join(base: string, path: string): string {
  return path === '/' ? base : `${base}${path}`;
}

/** The OIDC provider's well-known documents, which the reference answers at the host's root too. */
const WELL_KNOWN = '/.well-known/';

/**
 * Every resource template a route is served at. Client routes are also served without a prefix, because the
 * reference controller treats any un-prefixed path as the client API (older SDKs call `/authenticate` and `/enroll`);
 * so is the OIDC discovery document, which clients look for at `/.well-known/openid-configuration` as well.
 */
export function resourcesOf(route: Route): RouteResource[] {
  const resources: RouteResource[] = route.apis.map((api) => ({
    api,
    resource: join(API_BASE_PATHS[api], route.path),
  }));
  if (route.apis.includes('client')) resources.push({ api: 'client', resource: route.path });
  if (route.apis.includes('oidc') && route.path.startsWith(WELL_KNOWN)) {
    resources.push({ api: 'oidc', resource: route.path });
  }
  return resources;
}
