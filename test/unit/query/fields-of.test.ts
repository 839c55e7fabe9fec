import { describe, expect, it } from 'vitest';
import { fieldsOf } from '#shared/query/fields-of.ts';
import { parseFilter } from '#shared/query/parse-filter.ts';

describe('fieldsOf', () => {
  it('names every top-level field a condition and its sort read, once', () => {
    const filter = parseFilter(
      'name contains "a" and (tags.env = "x" or not isAdmin) and anyOf(roleAttributes) = "r" and isEmpty(configs) ' +
        'and count(roleAttributes) > 1 and cost between 1 and 5 and id in ["a"] sort by createdAt desc',
    );

    expect([...fieldsOf(filter.where, filter.sort)].sort()).toEqual(
      ['configs', 'cost', 'createdAt', 'id', 'isAdmin', 'name', 'roleAttributes', 'tags'].sort(),
    );
  });

  it('reads nothing for no condition and no sort, and only the sort fields for a constant', () => {
    expect([...fieldsOf(undefined)]).toEqual([]);
    expect([...fieldsOf(parseFilter('true sort by name').where, [{ field: 'name', direction: 'asc' }])]).toEqual([
      'name',
    ]);
  });
});
