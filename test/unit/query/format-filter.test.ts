import { describe, expect, it } from 'vitest';
import type { BoolExpr } from '#shared/query/filter-ast.ts';
import { formatBoolExpr, formatFilter, formatLiteral, formatSort } from '#shared/query/format-filter.ts';
import { parseFilter } from '#shared/query/parse-filter.ts';

const reformat = (text: string): string => formatFilter(parseFilter(text));

describe('formatFilter', () => {
  it('writes keywords in lower case and every clause', () => {
    expect(reformat('NAME CONTAINS "x" AND NOT isEmpty(r) SORT BY name DESC, id SKIP 1 LIMIT NONE')).toBe(
      'NAME contains "x" and (not isEmpty(r)) sort by name desc, id asc skip 1 limit none',
    );
  });

  it('writes clauses without a condition', () => {
    expect(reformat('limit 3')).toBe('limit 3');
    expect(reformat('')).toBe('');
  });

  it('brackets nested groups and not, and nothing else', () => {
    expect(reformat('a = 1 or b = 2 and c = 3')).toBe('a = 1 or b = 2 and c = 3');
    expect(reformat('(a = 1 or b = 2) and c = 3')).toBe('(a = 1 or b = 2) and c = 3');
    expect(reformat('(a = 1 and b = 2) and c = 3')).toBe('(a = 1 and b = 2) and c = 3');
    expect(reformat('(not a = 1) and b = 2')).toBe('(not a = 1) and b = 2');
    expect(reformat('not a = 1 and b = 2')).toBe('not (a = 1 and b = 2)');
  });

  it('quotes field names that are keywords', () => {
    expect(reformat("'sort' = 1 and anyOf('Limit') = \"a\" sort by 'none'")).toBe(
      "'sort' = 1 and anyOf('Limit') = \"a\" sort by 'none' asc",
    );
  });

  it('writes every operator', () => {
    const text =
      'a != null and b < "x" and c not contains 5 and d not icontains "y" and e not in [1, 2] and ' +
      'f not between datetime(2024-01-01T00:00:00Z) and datetime(2025-01-01T00:00:00+01:00) and count(g) >= 1 and ' +
      'allOf(h) in ["a"] and i = true';
    expect(reformat(text)).toBe(text);
  });
});

describe('formatLiteral', () => {
  it('escapes strings', () => {
    expect(formatLiteral({ type: 'string', value: 'a"b\\c\fd\ne\rf\tg', position: 0 })).toBe(
      String.raw`"a\"b\\c\fd\ne\rf\tg"`,
    );
  });

  it('refuses control characters that ZitiQL cannot write', () => {
    expect(() => formatLiteral({ type: 'string', value: 'a\u0001', position: 0 })).toThrow(
      new RangeError('a ZitiQL string cannot hold the control character U+0001'),
    );
  });

  it('keeps negative zero and exponents readable by the parser', () => {
    expect(formatLiteral({ type: 'number', value: -0, position: 0 })).toBe('-0');
    expect(formatLiteral({ type: 'number', value: 1e21, position: 0 })).toBe('1e+21');
    expect(parseFilter(`a = ${formatLiteral({ type: 'number', value: 1e21, position: 0 })}`).where).toMatchObject({
      value: { value: 1e21 },
    });
  });
});

describe('formatBoolExpr and formatSort', () => {
  it('write a condition and a sort order on their own', () => {
    const expr: BoolExpr = { kind: 'isEmpty', field: 'roleAttributes', position: 0 };
    expect(formatBoolExpr(expr)).toBe('isEmpty(roleAttributes)');
    expect(formatSort([{ field: 'name', direction: 'desc' }])).toBe('name desc');
  });
});
