import type { Api, AuthLevel, HttpMethod, OperationGroup, Route } from './route.ts';
import { MANAGEMENT, route } from './route-builder.ts';

/** The standard operations of a collection, in the order its route lines are listed. */
export const CRUD_ACTIONS = ['list', 'create', 'detail', 'replace', 'patch', 'delete'] as const;
export type CrudAction = (typeof CRUD_ACTIONS)[number];

/**
 * A collection the CRUD kit serves, declared once: the route table makes its lines from it and the group handler its
 * operations (`crudOperations` in `shared/crud/`), so each operation's name is spelled in this one place. It lives
 * with the route table, below everything else, because the route table may import nothing above it; the request
 * schemas and the mapping to documents (the entity's API, `functions/<group>/<type>-api.ts`) refer to it from above.
 */
export interface CrudResource {
  /** The collection's path relative to the API base path: `/identities`; items are at `<path>/{id}`. */
  readonly path: string;
  readonly group: OperationGroup;
  readonly apis: readonly Api[];
  readonly auth: AuthLevel;
  /** The operations it serves. */
  readonly actions: readonly CrudAction[];
  /** Each operation's name, as the reference's operationIds are formed (`listIdentities`, `updateIdentity`, …). */
  readonly names: Readonly<Record<CrudAction, string>>;
}

const METHOD_OF: Readonly<Record<CrudAction, HttpMethod>> = {
  list: 'GET',
  create: 'POST',
  detail: 'GET',
  replace: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
};

/** Whether an action addresses one item (`<path>/{id}`) rather than the collection. */
const ON_ITEM: ReadonlySet<CrudAction> = new Set(['detail', 'replace', 'patch', 'delete']);

/**
 * Declares a collection: its group, its path, the singular and plural its operation names are made of, and (when not
 * all six) the operations it serves. Management and admin-only unless said otherwise.
 */
export function crudResource(
  group: OperationGroup,
  path: string,
  singular: string,
  plural: string,
  options: {
    readonly actions?: readonly CrudAction[];
    readonly apis?: readonly Api[];
    readonly auth?: AuthLevel;
  } = {},
): CrudResource {
  return {
    path,
    group,
    apis: options.apis ?? MANAGEMENT,
    auth: options.auth ?? 'admin',
    actions: options.actions ?? CRUD_ACTIONS,
    names: {
      list: `list${plural}`,
      create: `create${singular}`,
      detail: `detail${singular}`,
      replace: `update${singular}`,
      patch: `patch${singular}`,
      delete: `delete${singular}`,
    },
  };
}

/**
 * The route lines of a collection's operations. `also` serves some of them a second time under other APIs or auth
 * levels (the client API's admin writes of services), under the same operation names.
 */
export function crudRoutes(
  resource: CrudResource,
  also?: { readonly actions: readonly CrudAction[]; readonly apis: readonly Api[]; readonly auth?: AuthLevel },
): Route[] {
  const { actions, apis, auth } = also ?? resource;
  return actions.map((action) =>
    route(
      METHOD_OF[action],
      ON_ITEM.has(action) ? `${resource.path}/{id}` : resource.path,
      apis,
      resource.group,
      auth ?? resource.auth,
      resource.names[action],
    ),
  );
}
