/**
 * The HTTP APIs of the controller: the edge client and management APIs, and the fabric API (`/fabric/v1`), which the
 * `ziti fabric` commands read with the management API's session.
 */
export type Api = 'client' | 'management' | 'fabric';

/**
 * What a caller must present.
 * - `none`: anonymous.
 * - `partial`: an API session, even one still waiting for its second factor.
 * - `authenticated`: a fully authenticated API session.
 * - `admin`: a fully authenticated API session of an identity with `isAdmin`.
 */
export type AuthLevel = 'none' | 'partial' | 'authenticated' | 'admin';

/** One Lambda function each; a group's bundle holds only the operations it routes. */
export type OperationGroup =
  | 'info'
  | 'authentication'
  | 'identities'
  | 'services'
  | 'routers'
  | 'posture-checks'
  | 'policies'
  | 'client'
  | 'poll'
  | 'sessions'
  | 'pki'
  | 'database'
  | 'fabric';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One operation of the route table. `path` is relative to the API base path, with `{param}` templates. */
export interface Route {
  readonly method: HttpMethod;
  readonly path: string;
  readonly apis: readonly Api[];
  readonly group: OperationGroup;
  readonly auth: AuthLevel;
  /** The operation's name; the OpenZiti operationId where the reference has one. */
  readonly operation: string;
}

export const API_BASE_PATHS: Readonly<Record<Api, string>> = {
  client: '/edge/client/v1',
  management: '/edge/management/v1',
  fabric: '/fabric/v1',
};
