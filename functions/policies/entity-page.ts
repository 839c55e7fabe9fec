import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { pageViews } from '#shared/crud/page-views.ts';
import type { BaseDocument, EntityDefinition } from '#shared/entities/entity-definition.ts';
import { list } from '#shared/http/envelope.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import { documented, type Operation, type OperationRequest, type QueryParameterDoc } from '#shared/http/operation.ts';
import { listEntities, listEntitiesAmong } from '#shared/list/list-entities.ts';
import { type ListParams, parseListParams } from '#shared/list/list-params.ts';
import type { Deps } from '#shared/ports/deps.ts';

/** What a list needs of an entity type: its definition and its management views (one page at a time if it can). */
export type EntityViews<D extends BaseDocument> = Pick<
  EntityApi<D, unknown, unknown, unknown>,
  'def' | 'view' | 'viewPage'
>;

/** The entities a list shows: every one of the type (`#all`), or those among known ids (a reach answer). */
export type Members = 'all' | readonly string[];

/** One page of the members as the type's management list shows them, with filter, sort and paging applied. */
export async function membersPage<D extends BaseDocument>(
  deps: Deps,
  api: EntityViews<D>,
  members: Members,
  params: ListParams,
): Promise<HttpResult> {
  const page =
    members === 'all'
      ? await listEntities(deps, api.def, params)
      : await listEntitiesAmong(deps, api.def, members, params);
  return list(await pageViews(deps, api, page.items), page.pagination, Object.keys(api.def.filterable));
}

/**
 * A list of the entities related to one entity (`GET /<owners>/{id}/<members>`): 404 for an unknown owner, 400 for a
 * bad list query (checked before anything is read), then the members `membersOf` finds for the owner, paged. `query`
 * documents the list's own parameters besides the standard ones.
 */
export function relatedList<O extends BaseDocument, D extends BaseDocument>(
  owners: EntityDefinition<O>,
  api: EntityViews<D>,
  membersOf: (deps: Deps, owner: O, request: OperationRequest) => Promise<Members>,
  query: readonly QueryParameterDoc[] = [],
): Operation {
  return documented(
    async (request, deps) => {
      const params = await parseListParams(request.query, api.def.filterable);
      const owner = await getOrNotFound(deps, owners, request.pathParameters.id ?? '');
      return membersPage(deps, api, await membersOf(deps, owner.doc, request), params);
    },
    { list: { roleFilter: false }, ...(query.length > 0 ? { query } : {}) },
  );
}
