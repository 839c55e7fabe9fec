import { describe, expect, it } from 'vitest';
import { FilterError } from '#shared/query/filter-error.ts';
import { parseFilter } from '#shared/query/parse-filter.ts';
import { parseSort } from '#shared/query/parse-sort.ts';
import { validateFilter, validateSort } from '#shared/query/validate-filter.ts';
import { FIELDS } from './filter-arbitraries.ts';

function validate(text: string): void {
  validateFilter(parseFilter(text), FIELDS);
}

/** The FilterError that validating the text throws. */
function errorOf(text: string): FilterError {
  try {
    validate(text);
  } catch (error) {
    if (error instanceof FilterError) return error;
    throw error;
  }
  throw new Error(`validated without error: ${text}`);
}

describe('validateFilter accepts', () => {
  it.each([
    'name = "x" and id != "y"',
    'name < "m" or name >= "a"',
    'name contains "x" and name not icontains "Y" and name contains 42',
    'name in ["a", "b"] and name not in ["c"]',
    'name = null and age != null and isAdmin = null and createdAt = null and tags.env = null',
    'age = 1 and age > 1.5 and age in [1, 2] and age not between 1 and 10',
    'isAdmin and isAdmin = true and isAdmin != false',
    'createdAt > datetime(2024-01-01T00:00:00Z) and createdAt in [datetime(2024-01-01T00:00:00+02:00)]',
    'createdAt between datetime(2024-01-01T00:00:00Z) and datetime(2025-01-01T00:00:00Z)',
    'anyOf(roleAttributes) = "web" and allOf(roleAttributes) contains "w" and anyOf(roleAttributes) in ["a"]',
    'allOf(roleAttributes) < "z" and count(roleAttributes) > 1 and count(roleAttributes) between 1 and 3',
    'isEmpty(roleAttributes) or not isEmpty(roleAttributes)',
    'tags.env = "prod" and tags.tier = 2 and tags.public = true and tags.public and tags.tier > 1',
    'tags.env contains "pr" and tags.env in ["a"] and tags.tier in [1] and tags.tier between 1 and 5',
    'tags.deeply.nested = "x"',
    'true and not false',
    'sort by name desc, createdAt, age, isAdmin, id skip 1 limit none',
    '',
  ])('%s', (text) => {
    expect(() => validate(text)).not.toThrow();
  });
});

describe('validateFilter rejects', () => {
  it.each([
    // text, column, message
    ['nme = "x"', 1, "unknown field 'nme' at line 1, column 1: expected one of age, createdAt, id, isAdmin, name"],
    ['age > 1 and (isAdmin or not nme = "x")', 29, "unknown field 'nme' at line 1, column 29"],
    ['constructor = null', 1, "unknown field 'constructor'"],
    ['toString', 1, "unknown field 'toString'"],
    ['anyOf(nope) = "x"', 7, "unknown field 'nope'"],
    ['name = 5', 8, 'cannot compare name (a string) with 5 at line 1, column 8: expected a string such as "x" or null'],
    ['name = true', 8, 'cannot compare name (a string) with true'],
    ['name > 5', 8, 'cannot compare name (a string) with 5 at line 1, column 8: expected a string such as "x"'],
    [
      'createdAt = "x"',
      13,
      'cannot compare createdAt (a datetime) with "x" at line 1, column 13: expected datetime(…)',
    ],
    ['createdAt < 5', 13, 'cannot compare createdAt (a datetime) with 5'],
    ['age = "1"', 7, 'cannot compare age (a number) with "1" at line 1, column 7: expected a number or null'],
    ['age in [1, "x"]', 12, 'all values of a list have the same type'],
    ['age in ["1"]', 9, 'cannot compare age (a number) with "1" at line 1, column 9: expected a list of numbers'],
    [
      'isAdmin = 1',
      11,
      'cannot compare isAdmin (a boolean) with 1 at line 1, column 11: expected true or false or null',
    ],
    ['isAdmin < 1', 1, "cannot use '<' on isAdmin (a boolean) at line 1, column 1: expected '=' or '!='"],
    ['isAdmin in [1]', 1, "cannot use 'in' on isAdmin (a boolean)"],
    ['isAdmin between 1 and 2', 1, "cannot use 'between' on isAdmin (a boolean)"],
    ['age contains "1"', 1, "cannot use 'contains' on age (a number) at line 1, column 1: expected strings"],
    ['createdAt icontains "1"', 1, "cannot use 'icontains' on createdAt (a datetime)"],
    ['count(roleAttributes) contains "1"', 7, "cannot use 'contains' on count(roleAttributes) (a number)"],
    ['name between 1 and 2', 1, "cannot use 'between' on name (a string) at line 1, column 1: expected numbers"],
    ['age between datetime(2024-01-01T00:00:00Z) and datetime(2025-01-01T00:00:00Z)', 13, 'cannot compare age'],
    ['name', 1, "'name' is a string, not a boolean at line 1, column 1: expected a comparison with a value"],
    ['roleAttributes', 1, "'roleAttributes' is a set of strings, not a boolean"],
    [
      'roleAttributes = "a"',
      1,
      "'roleAttributes' is a set of strings at line 1, column 1: expected anyOf(roleAttributes), " +
        'allOf(roleAttributes), count(roleAttributes) or isEmpty(roleAttributes)',
    ],
    ['roleAttributes contains "a"', 1, "'roleAttributes' is a set of strings"],
    ['tags = "a"', 1, "'tags' is a map at line 1, column 1: expected one of its keys, such as tags.<key>"],
    ['tags.env = datetime(2024-01-01T00:00:00Z)', 12, 'cannot compare tags.env (a map entry) with datetime('],
    ['anyOf(name) = "a"', 7, "anyOf(…) needs a set field, but 'name' is a string at line 1, column 7"],
    ['allOf(tags) = "a"', 7, "allOf(…) needs a set field, but 'tags' is a map"],
    ['count(age) > 1', 7, "count(…) needs a set field, but 'age' is a number"],
    ['isEmpty(tags.env)', 9, "isEmpty needs a set field, but 'tags.env' is a map entry"],
    ['anyOf(roleAttributes) = 1', 25, 'cannot compare anyOf(roleAttributes) (strings) with 1'],
    ['anyOf(roleAttributes) = null', 25, 'cannot compare anyOf(…) with null'],
    ['count(roleAttributes) = null', 25, 'cannot compare count(…) with null'],
    ['count(roleAttributes) = "2"', 25, 'cannot compare count(roleAttributes) (a number) with "2"'],
    ['sort by nope', 9, "unknown field 'nope' at line 1, column 9: expected a field to sort by: age, createdAt, id"],
    ['sort by name, roleAttributes', 15, "cannot sort by 'roleAttributes', a set of strings"],
    ['sort by tags', 9, "cannot sort by 'tags', a map"],
    ['sort by tags.env', 9, "cannot sort by 'tags.env', a map entry"],
  ])('%s', (text, column, message) => {
    const error = errorOf(text);
    expect(error.column).toBe(column);
    expect(error.message).toContain(message);
  });

  it('locates errors on later lines', () => {
    expect(errorOf('name = "x"\n  and nope = 1')).toMatchObject({ line: 2, column: 7, position: 17 });
  });

  it('lists map fields as keys among the known fields', () => {
    expect(errorOf('nope').message).toContain('roleAttributes, tags.<key>');
  });
});

describe('validateSort', () => {
  it('accepts sortable fields', () => {
    expect(() => validateSort(parseSort('name desc, createdAt'), FIELDS, 'name desc, createdAt')).not.toThrow();
    expect(() => validateSort([{ field: 'age', direction: 'asc' }], FIELDS, '')).not.toThrow();
  });

  it('points into the sort text', () => {
    const text = 'name, nope desc';
    expect(() => validateSort(parseSort(text), FIELDS, text)).toThrow(
      "unknown field 'nope' at line 1, column 7: expected a field to sort by",
    );
  });
});
