import { describe, expect, it } from 'vitest';
import { FilterError } from '#shared/query/filter-error.ts';
import { parseFilter } from '#shared/query/parse-filter.ts';
import { withoutPositions } from './filter-arbitraries.ts';

/** The condition of a filter, without positions. */
function whereOf(text: string): unknown {
  return withoutPositions(parseFilter(text).where);
}

const field = (name: string) => ({ kind: 'field', field: name });
const str = (value: string) => ({ type: 'string', value });
const num = (value: number) => ({ type: 'number', value });
const eq = (name: string, value: unknown, negated = false) => ({ kind: 'equals', lhs: field(name), negated, value });

describe('parseFilter comparisons', () => {
  it('reads = and != with a string', () => {
    expect(whereOf('name = "web"')).toEqual(eq('name', str('web')));
    expect(whereOf('name != "web"')).toEqual(eq('name', str('web'), true));
  });

  it.each(['<', '<=', '>', '>='])('reads the %s operator with a number', (operator) => {
    expect(whereOf(`age ${operator} 5`)).toEqual({ kind: 'compare', lhs: field('age'), operator, value: num(5) });
  });

  it('reads order operators with strings and datetimes', () => {
    expect(whereOf('name < "m"')).toEqual({ kind: 'compare', lhs: field('name'), operator: '<', value: str('m') });
    expect(whereOf('createdAt >= datetime(2024-01-01T00:00:00Z)')).toMatchObject({
      operator: '>=',
      value: { type: 'datetime', value: '2024-01-01T00:00:00Z' },
    });
  });

  it('needs no whitespace around comparison operators', () => {
    expect(whereOf('age>=5')).toEqual(whereOf('age >= 5'));
    expect(whereOf('name!="x"')).toEqual(eq('name', str('x'), true));
  });

  it('reads booleans and null after = and !=', () => {
    expect(whereOf('isAdmin = true')).toEqual(eq('isAdmin', { type: 'boolean', value: true }));
    expect(whereOf('isAdmin != false')).toEqual(eq('isAdmin', { type: 'boolean', value: false }, true));
    expect(whereOf('name = null')).toEqual(eq('name', { type: 'null' }));
    expect(whereOf('name != null')).toEqual(eq('name', { type: 'null' }, true));
  });

  it.each(['age < true', 'age > null', 'name >= false'])(
    'rejects %s: order operators need an ordered value',
    (text) => {
      expect(() => parseFilter(text)).toThrow(FilterError);
    },
  );

  it('reads contains and icontains, plain and negated', () => {
    expect(whereOf('name contains "we"')).toEqual({
      kind: 'contains',
      lhs: field('name'),
      negated: false,
      caseInsensitive: false,
      value: str('we'),
    });
    expect(whereOf('name not contains 42')).toMatchObject({ negated: true, caseInsensitive: false, value: num(42) });
    expect(whereOf('name icontains "WE"')).toMatchObject({ negated: false, caseInsensitive: true, value: str('WE') });
    expect(whereOf('name not icontains "WE"')).toMatchObject({ negated: true, caseInsensitive: true });
  });

  it('rejects icontains with a number', () => {
    expect(() => parseFilter('name icontains 4')).toThrow("expected a string after 'icontains'");
  });

  it('reads in lists of strings, numbers and datetimes', () => {
    expect(whereOf('name in ["a", "b"]')).toEqual({
      kind: 'in',
      lhs: field('name'),
      negated: false,
      values: [str('a'), str('b')],
    });
    expect(whereOf('age not in [1,2.5, -3]')).toEqual({
      kind: 'in',
      lhs: field('age'),
      negated: true,
      values: [num(1), num(2.5), num(-3)],
    });
    expect(whereOf('createdAt in [datetime(2024-01-01T00:00:00Z), datetime(2025-01-01T00:00:00Z)]')).toMatchObject({
      values: [{ type: 'datetime' }, { type: 'datetime' }],
    });
  });

  it.each([
    ['name in []', 'lists cannot be empty'],
    ['name in ["a", 1]', 'all values of a list have the same type'],
    ['isAdmin in [true]', 'expected a string, a number or datetime(…) (lists cannot be empty)'],
    ['name in "a"', "expected '[' to start a list of values"],
    ['name in ["a" "b"]', "expected ',' or ']'"],
  ])('rejects the list in %s', (text, message) => {
    expect(() => parseFilter(text)).toThrow(message);
  });

  it('reads between with numbers and with datetimes, plain and negated', () => {
    expect(whereOf('age between 1 and 10')).toEqual({
      kind: 'between',
      lhs: field('age'),
      negated: false,
      low: num(1),
      high: num(10),
    });
    expect(
      whereOf('createdAt not between datetime(2024-01-01T00:00:00Z) and datetime(2025-01-01T00:00:00Z)'),
    ).toMatchObject({ negated: true, low: { type: 'datetime' }, high: { type: 'datetime' } });
  });

  it.each([
    ['age between 1 and datetime(2024-01-01T00:00:00Z)', 'a number as the upper bound'],
    ['name between "a" and "b"', "expected a number or datetime(…) after 'between'"],
    ['age between 1 or 2', "expected 'and' after the lower bound"],
  ])('rejects the range in %s', (text, message) => {
    expect(() => parseFilter(text)).toThrow(message);
  });
});

describe('parseFilter logic', () => {
  const a = eq('a', num(1));
  const b = eq('b', num(2));
  const c = eq('c', num(3));

  it('binds and tighter than or', () => {
    expect(whereOf('a = 1 or b = 2 and c = 3')).toEqual({
      kind: 'or',
      operands: [a, { kind: 'and', operands: [b, c] }],
    });
    expect(whereOf('a = 1 and b = 2 or c = 3')).toEqual({
      kind: 'or',
      operands: [{ kind: 'and', operands: [a, b] }, c],
    });
  });

  it('lets parentheses override precedence', () => {
    expect(whereOf('(a = 1 or b = 2) and c = 3')).toEqual({
      kind: 'and',
      operands: [{ kind: 'or', operands: [a, b] }, c],
    });
  });

  it('collects a chain of one operator into one node, but keeps parenthesised groups', () => {
    expect(whereOf('a = 1 and b = 2 and c = 3')).toEqual({ kind: 'and', operands: [a, b, c] });
    expect(whereOf('(a = 1 and b = 2) and c = 3')).toEqual({
      kind: 'and',
      operands: [{ kind: 'and', operands: [a, b] }, c],
    });
  });

  it('applies not to everything after it, as the reference grammar does', () => {
    expect(whereOf('not a = 1 and b = 2')).toEqual({ kind: 'not', operand: { kind: 'and', operands: [a, b] } });
    expect(whereOf('a = 1 or not b = 2 and c = 3')).toEqual({
      kind: 'or',
      operands: [a, { kind: 'not', operand: { kind: 'and', operands: [b, c] } }],
    });
  });

  it('stops not at a closing parenthesis', () => {
    expect(whereOf('(not a = 1) and b = 2')).toEqual({ kind: 'and', operands: [{ kind: 'not', operand: a }, b] });
  });

  it('reads not not', () => {
    expect(whereOf('not not a = 1')).toEqual({ kind: 'not', operand: { kind: 'not', operand: a } });
  });

  it('reads true, false and bare boolean fields', () => {
    expect(whereOf('true')).toEqual({ kind: 'constant', value: true });
    expect(whereOf('false or isAdmin')).toEqual({
      kind: 'or',
      operands: [
        { kind: 'constant', value: false },
        { kind: 'boolField', field: 'isAdmin' },
      ],
    });
    expect(whereOf('(isAdmin)')).toEqual({ kind: 'boolField', field: 'isAdmin' });
    expect(parseFilter('isAdmin limit 1')).toMatchObject({ where: { kind: 'boolField' }, limit: 1 });
  });

  it('drops redundant parentheses', () => {
    expect(whereOf('((( a = 1 )))')).toEqual(a);
  });
});

describe('parseFilter keywords and identifiers', () => {
  it('matches keywords in any case', () => {
    const upper = parseFilter(
      'name CONTAINS "x" AnD age NoT iN [1] Or ISEMPTY(roleAttributes) OR AnyOf(r) = "a" aND isAdmin = TRUE ' +
        'and x = NULL or y = DateTime(2024-01-01T00:00:00Z) SORT BY name DESC SKIP 1 LIMIT NONE',
    );
    const lower = parseFilter(
      'name contains "x" and age not in [1] or isempty(roleAttributes) or anyof(r) = "a" and isAdmin = true ' +
        'and x = null or y = datetime(2024-01-01T00:00:00Z) sort by name desc skip 1 limit none',
    );
    expect(withoutPositions({ ...upper, text: '' })).toEqual(withoutPositions({ ...lower, text: '' }));
  });

  it('keeps the case of field names', () => {
    expect(whereOf('Name = "x"')).toEqual(eq('Name', str('x')));
  });

  it('reads a quoted identifier, which may be a keyword', () => {
    expect(whereOf("'limit' = 1")).toEqual(eq('limit', num(1)));
    expect(whereOf('\'tags.env\' = "x"')).toEqual(eq('tags.env', str('x')));
    expect(parseFilter("sort by 'sort' desc").sort).toEqual([{ field: 'sort', direction: 'desc', position: 8 }]);
  });

  it('reads words that merely start with a keyword as field names', () => {
    expect(whereOf('android = 1 and order = 2 and sorted = 3 and nonexistent')).toMatchObject({
      operands: [eq('android', num(1)), eq('order', num(2)), eq('sorted', num(3)), { field: 'nonexistent' }],
    });
  });

  it('reads dotted names, digits after the first letter and hyphens after a dot', () => {
    expect(whereOf('tags.env = "prod"')).toEqual(eq('tags.env', str('prod')));
    expect(whereOf('field2_b = 1')).toEqual(eq('field2_b', num(1)));
    expect(whereOf('tags.my-key.sub_key = 1')).toEqual(eq('tags.my-key.sub_key', num(1)));
    expect(whereOf('tags.limit = 1')).toEqual(eq('tags.limit', num(1)));
  });

  it('reads datetime as an ordinary field name when no parenthesis follows', () => {
    expect(whereOf('datetime = datetime(2024-01-01T00:00:00Z)')).toMatchObject({ lhs: field('datetime') });
  });
});

describe('parseFilter literals', () => {
  it('unescapes \\" \\\\ \\f \\n \\r \\t in strings', () => {
    expect(whereOf(String.raw`name = "a\"b\\c\fd\ne\rf\tg"`)).toEqual(eq('name', str('a"b\\c\fd\ne\rf\tg')));
  });

  it('keeps any other character in strings as is', () => {
    expect(whereOf('name = "日本 🎉 \'x\' ()[]"')).toEqual(eq('name', str("日本 🎉 'x' ()[]")));
    expect(whereOf('name = ""')).toEqual(eq('name', str('')));
  });

  it.each([
    ['0', 0],
    ['-1', -1],
    ['1.5', 1.5],
    ['1e3', 1000],
    ['-2.5E-3', -0.0025],
    ['1E+2', 100],
  ])('reads the number %s', (text, value) => {
    expect(whereOf(`age = ${text}`)).toEqual(eq('age', num(value)));
  });

  it('reads datetimes with Z, offsets and fractions as instants', () => {
    const at = (text: string) => (parseFilter(`t = ${text}`).where as { value: { instant: number } }).value.instant;
    expect(at('datetime(2024-01-31T12:00:00Z)')).toBe(Date.parse('2024-01-31T12:00:00Z'));
    expect(at('datetime(2024-01-31T14:00:00+02:00)')).toBe(Date.parse('2024-01-31T12:00:00Z'));
    expect(at('datetime(2024-01-31T06:30:00-05:30)')).toBe(Date.parse('2024-01-31T12:00:00Z'));
    expect(at('datetime(2024-01-31T12:00:00.25Z)')).toBe(Date.parse('2024-01-31T12:00:00.250Z'));
    expect(at('datetime(2024-01-31T12:00:00.123456Z)')).toBeCloseTo(Date.parse('2024-01-31T12:00:00.123Z') + 0.456, 6);
    expect(at('datetime( 2024-01-31t12:00:00z )')).toBe(Date.parse('2024-01-31T12:00:00Z'));
  });

  it('keeps the datetime text as written', () => {
    expect(whereOf('t = datetime(\t2024-01-31T12:00:00.5+01:00 )')).toMatchObject({
      value: { type: 'datetime', value: '2024-01-31T12:00:00.5+01:00' },
    });
  });
});

describe('parseFilter set functions', () => {
  it('reads anyOf, allOf and count on the left-hand side', () => {
    expect(whereOf('anyOf(roleAttributes) = "a"')).toMatchObject({ lhs: { kind: 'anyOf', field: 'roleAttributes' } });
    expect(whereOf('allOf( roleAttributes ) contains "a"')).toMatchObject({
      kind: 'contains',
      lhs: { kind: 'allOf', field: 'roleAttributes' },
    });
    expect(whereOf('count(roleAttributes) >= 2')).toEqual({
      kind: 'compare',
      lhs: { kind: 'count', field: 'roleAttributes' },
      operator: '>=',
      value: num(2),
    });
    expect(whereOf('count(roleAttributes) in [1, 2]')).toMatchObject({ kind: 'in', lhs: { kind: 'count' } });
  });

  it('reads isEmpty, also negated', () => {
    expect(whereOf('isEmpty(roleAttributes)')).toEqual({ kind: 'isEmpty', field: 'roleAttributes' });
    expect(whereOf('not isEmpty(roleAttributes)')).toEqual({
      kind: 'not',
      operand: { kind: 'isEmpty', field: 'roleAttributes' },
    });
  });

  it('requires an operator after a set function', () => {
    expect(() => parseFilter('anyOf(x)')).toThrow('expected an operator such as =');
  });

  it.each(['count(from identities where name = "x") > 1', 'isEmpty(from identities where true)'])(
    'rejects the sub-query in %s',
    (text) => {
      expect(() => parseFilter(text)).toThrow('sub-queries are not supported');
    },
  );
});

describe('parseFilter clauses', () => {
  it('reads sort by, skip and limit alone', () => {
    expect(parseFilter('sort by name')).toEqual({
      text: 'sort by name',
      sort: [{ field: 'name', direction: 'asc', position: 8 }],
    });
    expect(parseFilter('skip 10')).toEqual({ text: 'skip 10', sort: [], skip: 10 });
    expect(parseFilter('limit 5')).toEqual({ text: 'limit 5', sort: [], limit: 5 });
    expect(parseFilter('limit none')).toEqual({ text: 'limit none', sort: [], limit: 'none' });
    expect(parseFilter('skip 0 limit 0')).toEqual({ text: 'skip 0 limit 0', sort: [], skip: 0, limit: 0 });
  });

  it('reads several sort fields with and without directions', () => {
    expect(parseFilter('sort by name desc,createdAt asc ,  id').sort).toEqual([
      { field: 'name', direction: 'desc', position: 8 },
      { field: 'createdAt', direction: 'asc', position: 18 },
      { field: 'id', direction: 'asc', position: 35 },
    ]);
  });

  it('reads all clauses after a condition, across lines', () => {
    const parsed = parseFilter('\n  name = "x"\n  sort by name desc\n  skip 20\n  limit 10\n');
    expect(withoutPositions(parsed)).toEqual({
      text: '\n  name = "x"\n  sort by name desc\n  skip 20\n  limit 10\n',
      where: eq('name', str('x')),
      sort: [{ field: 'name', direction: 'desc' }],
      skip: 20,
      limit: 10,
    });
  });

  it('treats blank text as no filter', () => {
    expect(parseFilter('')).toEqual({ text: '', sort: [] });
    expect(parseFilter(' \t\r\n')).toEqual({ text: ' \t\r\n', sort: [] });
  });

  it.each(['skip -1', 'skip 1.5', 'limit -0', 'limit 1e300', 'skip "1"', 'limit all'])(
    'rejects the row count in %s',
    (text) => {
      expect(() => parseFilter(text)).toThrow('expected a whole number of rows');
    },
  );

  it('accepts a row count written with an exponent when it is a whole number', () => {
    expect(parseFilter('limit 1e2').limit).toBe(100);
  });

  it('rejects clauses out of order', () => {
    expect(() => parseFilter('limit 5 skip 3')).toThrow("'skip' is out of place");
    expect(() => parseFilter('skip 1 sort by name')).toThrow("'sort' is out of place");
  });
});
