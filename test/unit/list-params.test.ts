import { describe, expect, it } from 'vitest';
import { ApiError } from '#shared/http/api-error.ts';
import { parseListParams } from '#shared/list/list-params.ts';

const fields = { id: 'string', name: 'string', createdAt: 'datetime', roleAttributes: 'stringSet' } as const;
const parse = (query: Record<string, string[]>, roleFilter = false) => parseListParams(query, fields, { roleFilter });

function errorOf(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
  }
  throw new Error('expected an ApiError');
}

describe('parseListParams', () => {
  it('defaults to the first 10 in id order', () => {
    expect(parse({})).toMatchObject({ limit: 10, offset: 0, where: undefined, sort: [], roleFilter: undefined });
  });

  it('clamps limits and offsets the way the reference does', () => {
    expect(parse({ limit: ['501'] }).limit).toBe(500);
    expect(parse({ limit: ['-1'] }).limit).toBe(500);
    expect(parse({ limit: ['-7'] }).limit).toBe(10);
    expect(parse({ offset: ['-3'] }).offset).toBe(0);
    expect(parse({ offset: ['999999'] }).offset).toBe(100_000);
  });

  it('lets the filter override sort, skip and limit', () => {
    const params = parse({ filter: ['name = "x" sort by name desc skip 3 limit 4'], limit: ['50'], sort: ['id'] });

    expect(params).toMatchObject({ limit: 4, offset: 3, sort: [{ field: 'name', direction: 'desc' }] });
  });

  it('answers INVALID_PAGINATION naming the parameter', () => {
    const error = errorOf(() => parse({ offset: ['two'] }));

    expect(error.code).toBe('INVALID_PAGINATION');
    expect(error.apiCause).toMatchObject({ field: 'offset', value: 'two' });
  });

  it('answers INVALID_FILTER with the line and column', () => {
    const error = errorOf(() => parse({ filter: ['name = "a" and\nbogus = 1'] }));

    expect(error.code).toBe('INVALID_FILTER');
    expect(error.apiCause).toMatchObject({ field: 'filter', line: 2, column: 1 });
  });

  it('reads repeated and comma-separated role filters', () => {
    const params = parse({ roleFilter: ['#a,#b', '@id1'], roleSemantic: ['anyof'] }, true);

    expect(params.roleFilter).toEqual({ roles: ['#a', '#b', '@id1'], semantic: 'AnyOf' });
  });

  it('ignores role filters on lists that take none', () => {
    expect(parse({ roleFilter: ['#a'] }).roleFilter).toBeUndefined();
  });
});
