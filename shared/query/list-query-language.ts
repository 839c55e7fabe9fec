/**
 * The list query language a list's `filter` and `sort` parameters are written in: the parser and the checks against a
 * type's fields, in one module so that `list-params.ts` loads it with `await import()` only when a request names a
 * filter or a sort. Most requests (an SDK's polls, a detail, a create, a plain page) name neither, and its ~17 KB would
 * otherwise be read by every cold start of every function (the 300 KB budget of `bench/measure-bundles.ts`).
 */
export { parseFilter } from './parse-filter.ts';
export { parseSort } from './parse-sort.ts';
export { validateFilter, validateSort } from './validate-filter.ts';
