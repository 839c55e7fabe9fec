import type { ParsedFilter } from './filter-ast.ts';
import { FilterParser } from './filter-parser.ts';

/**
 * Parses a ZitiQL filter such as `name contains "web" and not isEmpty(roleAttributes) sort by name desc limit 10`.
 *
 * Keywords match in any case; a field name that is also a keyword can be written in single quotes (`'limit'`).
 * Sub-queries (`count(from x where …)`) are not supported. Blank text is accepted and yields an empty filter
 * (`{ text, sort: [] }`), though callers only pass non-empty filters. The text is limited to 4096 characters and
 * 64 levels of nesting (`MAX_FILTER_LENGTH`, `MAX_NESTING_DEPTH`).
 *
 * @throws FilterError when the text is not a valid filter; its message says where and what was expected.
 */
export function parseFilter(text: string): ParsedFilter {
  return new FilterParser(text).parseFilter();
}
