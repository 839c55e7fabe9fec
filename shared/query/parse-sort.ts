import type { SortField } from './filter-ast.ts';
import { FilterParser } from './filter-parser.ts';

/**
 * Parses a sort order such as `name desc, createdAt`, as given in the `sort` query parameter: the fields of a filter's
 * `sort by` clause, without the `sort by`. A field without a direction sorts ascending. Blank text yields `[]`.
 *
 * @throws FilterError when the text is not a valid sort order.
 */
export function parseSort(text: string): SortField[] {
  return new FilterParser(text).parseSort();
}
