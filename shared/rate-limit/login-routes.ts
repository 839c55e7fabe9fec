import { resourcesOf } from '../routes/resource-paths.ts';
import type { HttpMethod, Route } from '../routes/route.ts';

/**
 * The routes that check a credential (authenticate, its MFA step, every enrollment, the OIDC provider's login steps
 * and token endpoint): the ones a password sprayer or a flood of enrollments aims at, throttled harder than the rest
 * in AWS.
 */
export function isLoginRoute(route: Route): boolean {
  if (route.method !== 'POST') return false;
  if (route.apis.includes('oidc')) return route.path.startsWith('/login/') || route.path === '/oauth/token';
  return (
    route.path === '/authenticate' ||
    route.path.startsWith('/authenticate/') ||
    route.path === '/enroll' ||
    route.path.startsWith('/enroll/')
  );
}

/** Each resource template and method a login route is served at (both APIs, and the un-prefixed client paths). */
export function loginResources(routes: readonly Route[]): { resource: string; method: HttpMethod }[] {
  return routes
    .filter(isLoginRoute)
    .flatMap((route) => resourcesOf(route).map(({ resource }) => ({ resource, method: route.method })));
}

/**
 * The same paths for the web ACL, which sees the raw request path (the stage name first): it ends in
 * `/authenticate`, `/authenticate/<step>`, `/enroll` or `/enroll/<method>`, or is an OIDC login step
 * (`/oidc/login/<step>`) or the token endpoint (`/oidc/oauth/token`).
 */
export const LOGIN_PATH_PATTERN =
  '(/(authenticate|enroll)(/[A-Za-z0-9/_-]*)?|/oidc/login/[A-Za-z0-9/_-]+|/oidc/oauth/token)$';
