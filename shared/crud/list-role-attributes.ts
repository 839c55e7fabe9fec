import { list } from '../http/envelope.ts';
import type { OperationRequest } from '../http/operation.ts';
import { parseListParams } from '../list/list-params.ts';
import { pageInMemory } from '../list/page-in-memory.ts';
import type { Deps } from '../ports/deps.ts';
import type { SortField } from '../query/filter-ast.ts';
import { allRoleAttributes, roleAttributesPage } from '../store/index-queries.ts';

/** A role attribute as filters see it: the reference names the string `id`; clients also say `name`. */
const FIELDS = { id: 'string', name: 'string' } as const;

/**
 * The order asked for: by the attribute itself, ascending unless `desc`. Clients such as the admin console send
 * `sort=name asc` on every list; the reference ignores `sort` here, so an order that names anything else is ignored
 * rather than refused.
 */
async function directionOf(sortText: string | undefined): Promise<'asc' | 'desc'> {
  if (sortText === undefined || sortText.trim() === '') return 'asc';
  const { parseSort } = await import('../query/list-query-language.ts');
  let sort: SortField[] = [];
  try {
    sort = parseSort(sortText);
  } catch {
    return 'asc';
  }
  const [first] = sort;
  return first && (first.field === 'id' || first.field === 'name') ? first.direction : 'asc';
}

/**
 * `GET /<type>-role-attributes`: the distinct role attributes the type's entities hold, from its role-attribute
 * catalog. Unfiltered pages read only the page's catalog keys; a filter reads the catalog (one small item per
 * attribute in use, whatever the number of entities).
 */
export async function listRoleAttributes(request: OperationRequest, deps: Deps, collection: string) {
  const { sort: sortText, ...query } = request.query;
  const params = await parseListParams(query, FIELDS);
  const direction = params.sort[0]?.direction ?? (await directionOf(sortText?.[0]));
  if (params.where === undefined) {
    const page = await roleAttributesPage(deps.store, collection, direction, params.offset, params.limit);
    return list(
      page.attributes,
      { limit: params.limit, offset: params.offset, totalCount: page.totalCount },
      Object.keys(FIELDS),
    );
  }
  const records = (await allRoleAttributes(deps.store, collection)).map((id) => ({ id, name: id }));
  const page = pageInMemory(records, { ...params, sort: [{ field: 'id', direction }] }, FIELDS);
  return list(
    page.items.map((record) => record.id),
    page.pagination,
    Object.keys(FIELDS),
  );
}
