import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareForSort } from '#shared/query/compare-for-sort.ts';
import type { BoolExpr } from '#shared/query/filter-ast.ts';
import { FilterError } from '#shared/query/filter-error.ts';
import { formatBoolExpr, formatFilter, formatSort } from '#shared/query/format-filter.ts';
import { matchesFilter } from '#shared/query/matches-filter.ts';
import { parseFilter } from '#shared/query/parse-filter.ts';
import { parseSort } from '#shared/query/parse-sort.ts';
import { validateFilter } from '#shared/query/validate-filter.ts';
import {
  ANY_NAMES,
  boolExprArbitrary,
  FIELDS,
  identifier,
  recordArbitrary,
  SCHEMA_NAMES,
  sortArbitrary,
  withoutPositions,
} from './filter-arbitraries.ts';

/** Pieces of filters, right and wrong, to glue together at random. */
const FRAGMENTS = [
  '(',
  ')',
  '[',
  ']',
  ',',
  '=',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '!',
  'and',
  'OR',
  'not',
  'in',
  'between',
  'contains',
  'icontains',
  'true',
  'FALSE',
  'null',
  'allOf',
  'anyOf(',
  'count',
  'isEmpty',
  'sort',
  'by',
  'asc',
  'desc',
  'skip',
  'limit',
  'none',
  'from',
  'where',
  'name',
  'age',
  'isAdmin',
  'roleAttributes',
  'tags.env',
  'tags.',
  "'limit'",
  "'",
  '"str"',
  '"esc\\"',
  '"',
  '\\',
  '1',
  '-2.5e3',
  '1.',
  '-',
  '0x1',
  'datetime(2024-01-01T00:00:00Z)',
  'datetime(',
  'datetime(2024-02-30T00:00:00Z)',
  '.',
  '#',
  'é',
  '🎉',
  '\u0000',
];

/** Pieces that often add up to a filter that validates against {@link FIELDS}. */
const SCHEMA_FRAGMENTS = [
  '(',
  ')',
  '=',
  '!=',
  '<',
  'and',
  'or',
  'not',
  'name',
  'age',
  'isAdmin',
  'createdAt',
  'tags.env',
  'anyOf(roleAttributes)',
  'allOf(roleAttributes)',
  'count(roleAttributes)',
  'isEmpty(roleAttributes)',
  '"web"',
  '1',
  'true',
  'null',
  'in',
  '[',
  ']',
  ',',
  'contains',
  'between',
  'datetime(2024-03-01T10:00:00Z)',
  'sort by',
  'name desc',
  'limit',
];

function glue(fragments: readonly string[]): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(fc.constantFrom(...fragments), fc.constantFrom(' ', '', '\n', '\t', '\r\n')), { maxLength: 30 })
    .map((pieces) => pieces.map(([fragment, space]) => fragment + space).join(''));
}

const anyText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  glue(FRAGMENTS),
  glue(SCHEMA_FRAGMENTS),
);

/** Parses, returning undefined for a FilterError and rethrowing anything else. */
function tryParse(text: string) {
  try {
    return parseFilter(text);
  } catch (error) {
    if (!(error instanceof FilterError)) throw error;
    expect(error.position).toBeGreaterThanOrEqual(0);
    expect(error.position).toBeLessThanOrEqual(text.length);
    expect(error.line).toBeGreaterThanOrEqual(1);
    expect(error.column).toBeGreaterThanOrEqual(1);
    return undefined;
  }
}

describe('filter properties', () => {
  it('parseFilter throws nothing but FilterError, on any text', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        tryParse(text);
      }),
      { numRuns: 3000 },
    );
  });

  it('matchesFilter and compareForSort never throw for a filter that parses and validates', () => {
    fc.assert(
      fc.property(glue(SCHEMA_FRAGMENTS), fc.array(recordArbitrary, { maxLength: 5 }), (text, records) => {
        const parsed = tryParse(text);
        if (parsed === undefined) return;
        try {
          validateFilter(parsed, FIELDS);
        } catch (error) {
          if (error instanceof FilterError) return;
          throw error;
        }
        for (const record of records) expect(typeof matchesFilter(parsed.where, record)).toBe('boolean');
        records.sort(compareForSort(parsed.sort, FIELDS));
      }),
      { numRuns: 3000 },
    );
  });

  it('a formatted filter parses back to the same tree', () => {
    const filter = fc.record(
      {
        where: boolExprArbitrary(ANY_NAMES),
        sort: sortArbitrary(identifier),
        skip: fc.nat(),
        limit: fc.oneof(fc.nat(), fc.constant('none' as const)),
      },
      { requiredKeys: ['sort'] },
    );
    fc.assert(
      fc.property(filter, (generated) => {
        const text = formatFilter(generated);
        const { text: parsedText, ...parsed } = parseFilter(text);
        expect(parsedText).toBe(text);
        expect(withoutPositions(parsed)).toEqual(withoutPositions(generated));
        expect(formatFilter(parsed)).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });

  it('a formatted sort order parses back to the same fields', () => {
    fc.assert(
      fc.property(sortArbitrary(identifier), (sort) => {
        expect(withoutPositions(parseSort(formatSort(sort)))).toEqual(withoutPositions(sort));
      }),
    );
  });

  it('not X matches exactly the records X does not', () => {
    fc.assert(
      fc.property(boolExprArbitrary(SCHEMA_NAMES), recordArbitrary, (expr, record) => {
        const negated = parseFilter(`not (${formatBoolExpr(expr)})`).where;
        expect(matchesFilter(negated, record)).toBe(!matchesFilter(expr, record));
      }),
      { numRuns: 2000 },
    );
  });

  it('a negated operator on a plain field matches exactly the records the operator does not', () => {
    const negatable = boolExprArbitrary(SCHEMA_NAMES, 1).filter(
      (expr) => 'negated' in expr && expr.lhs.kind === 'field',
    );
    fc.assert(
      fc.property(negatable, recordArbitrary, (expr, record) => {
        const flipped = { ...expr, negated: !('negated' in expr && expr.negated) } as BoolExpr;
        expect(matchesFilter(flipped, record)).toBe(!matchesFilter(expr, record));
      }),
      { numRuns: 2000 },
    );
  });

  it('generated filters validate, and matchesFilter never throws on any record for them', () => {
    const anyRecord = fc.oneof(recordArbitrary, fc.object(), fc.dictionary(fc.string(), fc.anything()));
    fc.assert(
      fc.property(boolExprArbitrary(SCHEMA_NAMES), fc.array(anyRecord, { maxLength: 5 }), (expr, records) => {
        const text = formatBoolExpr(expr);
        const parsed = parseFilter(text);
        validateFilter(parsed, FIELDS);
        for (const record of records) expect(typeof matchesFilter(parsed.where, record)).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
  });

  it('compareForSort is a consistent order on untidy records', () => {
    const sort = sortArbitrary(fc.constantFrom('id', 'name', 'age', 'isAdmin', 'createdAt', 'tags.env', 'nope'));
    fc.assert(
      fc.property(sort, fc.array(recordArbitrary, { minLength: 2, maxLength: 8 }), (fields, records) => {
        const compare = compareForSort(fields, FIELDS);
        for (const a of records) {
          expect(compare(a, a)).toBe(0);
          for (const b of records) expect(Math.sign(compare(a, b))).toBe(-Math.sign(compare(b, a)) || 0);
        }
        const sorted = records.toSorted(compare);
        for (let i = 1; i < sorted.length; i++) expect(compare(sorted[i - 1]!, sorted[i]!)).toBeLessThanOrEqual(0);
      }),
      { numRuns: 1000 },
    );
  });
});
