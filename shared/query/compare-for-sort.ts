import type { SortField } from './filter-ast.ts';
import { type FilterableFields, resolveFieldType } from './filterable-fields.ts';
import { instantOf } from './instant-of.ts';
import { readField } from './read-field.ts';

type SortRecord = Readonly<Record<string, unknown>>;

/** Values of different kinds order by kind first, so the comparator stays consistent on untidy data. */
const RANK = { missing: 0, boolean: 1, number: 2, instant: 3, string: 4, other: 5 } as const;

/**
 * A comparator for `Array.prototype.sort` that orders records by the given fields, then by `id` ascending so that
 * the order is total.
 *
 * Values compare as in filters: numbers numerically, strings by UTF-16 code units, `false` before `true`, `Date`s
 * and the strings of `datetime` fields (when `fields` is given) as instants. Missing and `null` values sort first
 * ascending and last descending. Values of different kinds (which validated data does not have) sort by kind.
 *
 * @param fields - the resource's filterable fields, so that `datetime` fields stored as strings compare as
 *   instants; without them such strings compare as strings, which only agrees for UTC timestamps of equal precision.
 */
export function compareForSort(
  sort: readonly SortField[],
  fields?: FilterableFields,
): (a: SortRecord, b: SortRecord) => number {
  const keys = sort.map(({ field, direction }) => ({
    field,
    sign: direction === 'desc' ? -1 : 1,
    datetime: fields !== undefined && resolveFieldType(fields, field) === 'datetime',
  }));
  return (a, b) => {
    for (const { field, sign, datetime } of keys) {
      const order = compareValues(readField(a, field), readField(b, field), datetime);
      if (order !== 0) return sign * order;
    }
    return compareValues(a.id, b.id, false);
  };
}

function compareValues(a: unknown, b: unknown, datetime: boolean): number {
  const [rankA, keyA] = sortKey(a, datetime);
  const [rankB, keyB] = sortKey(b, datetime);
  if (rankA !== rankB) return rankA - rankB;
  if (keyA < keyB) return -1;
  return keyA > keyB ? 1 : 0;
}

function sortKey(value: unknown, datetime: boolean): [number, string | number] {
  if (value === undefined || value === null) return [RANK.missing, 0];
  switch (typeof value) {
    case 'boolean':
      return [RANK.boolean, Number(value)];
    case 'number':
      return Number.isNaN(value) ? [RANK.other, 0] : [RANK.number, value];
    case 'string': {
      const instant = datetime ? instantOf(value) : undefined;
      return instant === undefined ? [RANK.string, value] : [RANK.instant, instant];
    }
  }
  const instant = instantOf(value);
  return instant === undefined ? [RANK.other, 0] : [RANK.instant, instant];
}
