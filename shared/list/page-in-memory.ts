import { compareForSort } from '../query/compare-for-sort.ts';
import type { FilterableFields } from '../query/filterable-fields.ts';
import { matchesFilter } from '../query/matches-filter.ts';
import type { ListParams } from './list-params.ts';

/** Where a page stands in its list, as `meta.pagination` says it. */
export interface Pagination {
  readonly limit: number;
  readonly offset: number;
  readonly totalCount: number;
}

export interface ListPage<D> {
  readonly items: D[];
  readonly pagination: Pagination;
}

/**
 * One page of records already in memory, filtered, sorted and cut the way every list is; `keep` adds a condition
 * of the caller's own (a role filter, a liveness check).
 */
export function pageInMemory<T extends object>(
  records: readonly T[],
  params: ListParams,
  fields: FilterableFields,
  keep: (record: T) => boolean = () => true,
): ListPage<T> {
  const asRecord = (record: T) => record as Readonly<Record<string, unknown>>;
  const matched = records.filter((record) => matchesFilter(params.where, asRecord(record)) && keep(record));
  const compare = compareForSort(params.sort, fields);
  matched.sort((a, b) => compare(asRecord(a), asRecord(b)));
  return {
    items: matched.slice(params.offset, params.offset + params.limit),
    pagination: { limit: params.limit, offset: params.offset, totalCount: matched.length },
  };
}
