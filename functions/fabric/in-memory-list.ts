import { list } from '#shared/http/envelope.ts';
import type { HttpResult } from '#shared/http/http-result.ts';
import type { OperationRequest } from '#shared/http/operation.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { pageInMemory } from '#shared/list/page-in-memory.ts';
import type { FilterableFields } from '#shared/query/filterable-fields.ts';

/** What a list of items read whole is made of. */
export interface InMemoryList<T extends { readonly id: string }> {
  /** The fields the list filters and sorts on, each item's values of them given by `recordOf`. */
  readonly fields: FilterableFields;
  readonly recordOf: (item: T) => Readonly<Record<string, unknown>>;
  /** Every item (read once the query is known to be valid). */
  readonly read: () => Promise<readonly T[]>;
  /** The page's items as the API shows them, made at once (the names they refer to read once a page). */
  readonly views: (page: readonly T[]) => Promise<unknown[]>;
}

/**
 * One page of items read whole (the table keeps no filter records for them: circuits, links), filtered, sorted and
 * cut by the list's query as every list is; a bad query is a 400 before anything is read.
 */
export async function listInMemory<T extends { readonly id: string }>(
  request: OperationRequest,
  { fields, recordOf, read, views }: InMemoryList<T>,
): Promise<HttpResult> {
  const params = await parseListParams(request.query, fields);
  const items = await read();
  const byId = new Map(items.map((item) => [item.id, item]));
  const page = pageInMemory(items.map(recordOf), params, fields);
  const pageItems = page.items.flatMap((record) => byId.get(String(record.id)) ?? []);
  return list(await views(pageItems), page.pagination, Object.keys(fields));
}
