import { describe, expect, it } from 'vitest';
import { ApiError } from '#shared/errors/api-error.ts';
import { parseListParams } from '#shared/list/list-params.ts';

const fields = { id: 'string', name: 'string', createdAt: 'datetime', roleAttributes: 'stringSet' } as const;
const parse = (query: Record<string, string[]>, roleFilter = false) => parseListParams(query, fields, { roleFilter });

async function errorOf(run: () => Promise<unknown>): Promise<ApiError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ApiError) return error;
  }
  throw new Error('expected an ApiError');
}

describe('parseListParams', () => {
  it('defaults to the first 10 in id order', async () => {
    expect(await parse({})).toMatchObject({ limit: 10, offset: 0, where: undefined, sort: [], roleFilter: undefined });
  });

  it('clamps limits and offsets the way the reference does', async () => {
    expect((await parse({ limit: ['501'] })).limit).toBe(500);
    expect((await parse({ limit: ['-1'] })).limit).toBe(500);
    expect((await parse({ limit: ['-7'] })).limit).toBe(10);
    expect((await parse({ offset: ['-3'] })).offset).toBe(0);
    expect((await parse({ offset: ['999999'] })).offset).toBe(100_000);
  });

  it('lets the filter override sort, skip and limit', async () => {
    const params = await parse({
      filter: ['name = "x" sort by name desc skip 3 limit 4'],
      limit: ['50'],
      sort: ['id'],
    });

    expect(params).toMatchObject({ limit: 4, offset: 3, sort: [{ field: 'name', direction: 'desc' }] });
  });

  it('answers INVALID_PAGINATION naming the parameter', async () => {
    const error = await errorOf(() => parse({ offset: ['two'] }));

    expect(error.code).toBe('INVALID_PAGINATION');
    expect(error.apiCause).toMatchObject({ field: 'offset', value: 'two' });
  });

  it('answers INVALID_FILTER with the line and column', async () => {
    const error = await errorOf(() => parse({ filter: ['name = "a" and\nbogus = 1'] }));

    expect(error.code).toBe('INVALID_FILTER');
    expect(error.apiCause).toMatchObject({ field: 'filter', line: 2, column: 1 });
  });

  it('reads repeated and comma-separated role filters', async () => {
    const params = await parse({ roleFilter: ['#a,#b', '@id1'], roleSemantic: ['anyof'] }, true);

    expect(params.roleFilter).toEqual({ roles: ['#a', '#b', '@id1'], semantic: 'AnyOf' });
  });

  it('ignores role filters on lists that take none', async () => {
    expect((await parse({ roleFilter: ['#a'] })).roleFilter).toBeUndefined();
  });
});

describe('parseListParams with a field alias', () => {
  const aliased = {
    id: 'string',
    configTypeId: 'string',
    type: { aliasOf: 'configTypeId' },
    roleAttributes: 'stringSet',
  } as const;
  const parseAliased = (query: Record<string, string[]>) => parseListParams(query, aliased);

  it('validates the alias as the field it names and hands back that field', async () => {
    const params = await parseAliased({ filter: ['type = "t1"'] });

    expect(params.where).toMatchObject({ kind: 'equals', lhs: { kind: 'field', field: 'configTypeId' } });
  });

  it('resolves the alias inside and, or, not and every comparison', async () => {
    const params = await parseAliased({
      filter: ['(type in ["a", "b"] or type contains "x") and not type >= "m" and id != "i"'],
    });

    expect(JSON.stringify(params.where)).not.toContain('"field":"type"');
    expect(JSON.stringify(params.where).match(/"field":"configTypeId"/g)).toHaveLength(3);
    expect(JSON.stringify(params.where)).toContain('"field":"id"');
  });

  it('sorts by the aliased field, from the filter or the sort parameter', async () => {
    expect((await parseAliased({ filter: ['true sort by type desc'] })).sort).toEqual([
      expect.objectContaining({ field: 'configTypeId', direction: 'desc' }),
    ]);
    expect((await parseAliased({ sort: ['type'] })).sort).toEqual([
      expect.objectContaining({ field: 'configTypeId', direction: 'asc' }),
    ]);
  });

  it('checks values against the aliased field type and names the alias in the error', async () => {
    const error = await errorOf(() => parseAliased({ filter: ['type = 3'] }));

    expect(error.code).toBe('INVALID_FILTER');
    expect(String(error.apiCause?.reason)).toContain('type (a string)');
  });

  it('offers the alias among the fields to sort by', async () => {
    const error = await errorOf(() => parseAliased({ sort: ['roleAttributes'] }));

    expect(error.code).toBe('INVALID_SORT_IDENTIFIER');
    expect(String(error.apiCause?.reason)).toContain('configTypeId, id, type');
  });
});
