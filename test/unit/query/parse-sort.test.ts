import { describe, expect, it } from 'vitest';
import { parseSort } from '#shared/query/parse-sort.ts';

describe('parseSort', () => {
  it('reads fields with and without directions, in any case', () => {
    expect(parseSort('name DESC, createdAt,id Asc')).toEqual([
      { field: 'name', direction: 'desc', position: 0 },
      { field: 'createdAt', direction: 'asc', position: 11 },
      { field: 'id', direction: 'asc', position: 21 },
    ]);
  });

  it('reads quoted and dotted field names', () => {
    expect(parseSort("'limit' desc, tags.env")).toEqual([
      { field: 'limit', direction: 'desc', position: 0 },
      { field: 'tags.env', direction: 'asc', position: 14 },
    ]);
  });

  it('yields no fields for blank text', () => {
    expect(parseSort('')).toEqual([]);
    expect(parseSort('  ')).toEqual([]);
  });

  it.each([
    ['sort by name', "unexpected 'sort' at line 1, column 1: expected a field name to sort by ('sort' is a keyword"],
    ['name by', "unexpected 'by' at line 1, column 6: expected ',' or the end of the text"],
    ['name,', 'unexpected end of text at line 1, column 6: expected a field name to sort by'],
    ['name desc desc', "unexpected 'desc' at line 1, column 11"],
    ['name = "x"', "unexpected '=' at line 1, column 6"],
    ['limit', "('limit' is a keyword: quote it as 'limit' to use it as a field name)"],
  ])('rejects %j', (text, message) => {
    expect(() => parseSort(text)).toThrow(message);
  });
});
