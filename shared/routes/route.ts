/**
 * The HTTP APIs of the controller: the edge client and management APIs, the fabric API (`/fabric/v1`), which the
 * `ziti fabric` commands read with the management API's session, and the OIDC provider (`/oidc`), where OpenZiti 2
 * SDKs log in (`docs/oidc-design.md`).
 */
export type Api = 'client' | 'management' | 'fabric' | 'oidc';

/**
 * The APIs described by an OpenAPI document of ours and the reference's. The OIDC provider has none: its endpoints are
 * OpenID Connect's and OAuth's own (discovery tells a client where they are), checked by `test/api/oidc-*.test.ts`.
 */
export type DocumentedApi = Exclude<Api, 'oidc'>;

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
  oidc: '/oidc',
};
