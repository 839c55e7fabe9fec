import type { Api, AuthLevel, HttpMethod, OperationGroup, Route } from './route.ts';

export const BOTH: readonly Api[] = ['client', 'management'];
export const MANAGEMENT: readonly Api[] = ['management'];
export const CLIENT: readonly Api[] = ['client'];
export const FABRIC: readonly Api[] = ['fabric'];
export const OIDC: readonly Api[] = ['oidc'];

/** One line of the route table. */
export function route(
  method: HttpMethod,
  path: string,
  apis: readonly Api[],
  group: OperationGroup,
  auth: AuthLevel,
  operation: string,
): Route {
  return { method, path, apis, group, auth, operation };
}
