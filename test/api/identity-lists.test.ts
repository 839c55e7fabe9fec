import { beforeAll, describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../contract/openziti-spec.ts';
import { useAdminController } from '../support/admin-controller.ts';

const { call, createdId } = useAdminController();
const ids = new Map<string, string>();

const ATTRIBUTES = [['sales'], ['sales', 'emea'], ['eng'], ['eng', 'emea'], []];

beforeAll(async () => {
  // 24 identities: list-00 … list-23, plus the default admin.
  for (let i = 0; i < 24; i++) {
    const name = `list-${String(i).padStart(2, '0')}`;
    const id = await createdId('/identities', {
      name,
      type: 'User',
      isAdmin: i % 6 === 0,
      roleAttributes: ATTRIBUTES[i % ATTRIBUTES.length],
      defaultHostingCost: i,
      tags: { parity: i % 2 === 0 ? 'even' : 'odd' },
    });
    ids.set(name, id);
  }
});

const list = (query: string, path = '/identities') => call('GET', `${path}?${query}`);
const names = (response: { body: { data: { name: string }[] } }) => response.body.data.map((identity) => identity.name);
const filter = (text: string) => `filter=${encodeURIComponent(text)}`;

describe('paging', () => {
  it('answers 10 by default, with the total and the filterable fields', async () => {
    const response = await list('');

    expect(response.status).toBe(200);
    expect(response.body.data).toHaveLength(10);
    expect(response.body.meta.pagination).toEqual({ limit: 10, offset: 0, totalCount: 25 });
    expect(response.body.meta.filterableFields).toEqual(
      expect.arrayContaining(['name', 'roleAttributes', 'tags', 'isAdmin']),
    );
    expectMatchesSpec('management', 'GET', '/identities', 200, response.body);
  });

  it('walks every identity exactly once across pages', async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 25; offset += 7)
      seen.push(...(await list(`limit=7&offset=${offset}`)).body.data.map((i: { id: string }) => i.id));

    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
    expect(seen).toEqual([...seen].sort());
  });

  it('clamps a limit above 500 and treats 0 as the default', async () => {
    expect((await list('limit=600')).body.meta.pagination.limit).toBe(500);
    expect((await list('limit=0')).body.meta.pagination.limit).toBe(10);
  });

  it('answers an empty page past the end, with the total', async () => {
    const response = await list('offset=1000');

    expect(response.body.data).toEqual([]);
    expect(response.body.meta.pagination.totalCount).toBe(25);
  });

  it.each([['limit=ten'], ['offset=1.5'], ['limit=5x']])('answers 400 INVALID_PAGINATION for %s', async (query) => {
    const response = await list(query);

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('INVALID_PAGINATION');
    expectMatchesSpec('management', 'GET', '/identities', 400, response.body);
  });
});

describe('filters', () => {
  it.each([
    ['name = "list-03"', ['list-03']],
    ['name in ["list-01", "list-02", "nobody"]', ['list-01', 'list-02']],
    ['name contains "-1" and isAdmin = true', ['list-12', 'list-18']],
    ['name icontains "LIST-2" or name = "list-00"', ['list-00', 'list-20', 'list-21', 'list-22', 'list-23']],
    ['defaultHostingCost between 3 and 6', ['list-03', 'list-04', 'list-05']],
    ['defaultHostingCost >= 22', ['list-22', 'list-23']],
    ['anyOf(roleAttributes) = "emea" and defaultHostingCost < 5', ['list-01', 'list-03']],
    ['allOf(roleAttributes) = "sales" and defaultHostingCost < 10', ['list-00', 'list-05']],
    ['isEmpty(roleAttributes) and name contains "list"', ['list-04', 'list-09', 'list-14', 'list-19']],
    ['tags.parity = "odd" and defaultHostingCost < 6', ['list-01', 'list-03', 'list-05']],
    ['not (name contains "list")', ['Default Admin']],
    [`createdAt > datetime(2000-01-01T00:00:00Z) and name = "list-07"`, ['list-07']],
  ])('%s', async (text, expected) => {
    const response = await list(`limit=100&${filter(text)}`);

    expect(response.status).toBe(200);
    expect(names(response).sort()).toEqual(expected);
    expect(response.body.meta.pagination.totalCount).toBe(expected.length);
  });

  it('finds identities by id, alone or with other conditions', async () => {
    const one = await list(filter(`id = "${ids.get('list-05')}"`));
    const some = await list(
      filter(`id in ["${ids.get('list-05')}", "${ids.get('list-06')}", "nope"] and isAdmin = false`),
    );

    expect(names(one)).toEqual(['list-05']);
    expect(names(some)).toEqual(['list-05']);
    expect(some.body.meta.pagination.totalCount).toBe(1);
  });

  it('takes sort by, skip and limit from inside the filter', async () => {
    const response = await list(filter('name contains "list" sort by name desc skip 2 limit 3'));

    expect(names(response)).toEqual(['list-21', 'list-20', 'list-19']);
    expect(response.body.meta.pagination).toEqual({ limit: 3, offset: 2, totalCount: 24 });
  });

  it.each([
    ['name = ', 'a missing value'],
    ['name ~ "x"', 'an unknown operator'],
    ['nosuchfield = "x"', 'an unknown field'],
    ['name = 5', 'a value of the wrong type'],
    ['roleAttributes = "x"', 'a set used as a scalar'],
    ['(name = "x"', 'an unclosed parenthesis'],
  ])('answers 400 INVALID_FILTER for %s (%s), pointing at the position', async (text) => {
    const response = await list(filter(text));

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('INVALID_FILTER');
    expect(response.body.error.cause).toMatchObject({ field: 'filter', line: 1 });
    expect(typeof response.body.error.cause.column).toBe('number');
    expectMatchesSpec('management', 'GET', '/identities', 400, response.body);
  });
});

describe('sorting', () => {
  it('sorts by the sort parameter', async () => {
    const response = await list(`sort=${encodeURIComponent('name desc')}&limit=3`);

    expect(names(response)).toEqual(['list-23', 'list-22', 'list-21']);
  });

  it('pages by name from the name markers exactly as a full in-memory sort orders them', async () => {
    const everything = names(
      await list(`${filter('name contains ""')}&sort=${encodeURIComponent('name desc')}&limit=100`),
    );

    for (const offset of [0, 5, 20]) {
      const page = await list(`sort=${encodeURIComponent('name desc')}&limit=5&offset=${offset}`);
      expect(names(page)).toEqual(everything.slice(offset, offset + 5));
      expect(page.body.meta.pagination.totalCount).toBe(25);
    }
    expect(everything.at(-1)).toBe('Default Admin'); // byte order: upper case before lower case
  });

  it('sorts by several keys', async () => {
    const response = await list(
      `${filter('name contains "list"')}&sort=${encodeURIComponent('isAdmin desc, defaultHostingCost desc')}&limit=5`,
    );

    expect(names(response)).toEqual(['list-18', 'list-12', 'list-06', 'list-00', 'list-23']);
  });

  it('answers 400 INVALID_SORT_IDENTIFIER for an unknown sort field', async () => {
    const response = await list('sort=shoeSize');

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('INVALID_SORT_IDENTIFIER');
  });
});

describe('role filters', () => {
  it('matches all the roles by default (AllOf)', async () => {
    const response = await list(
      `roleFilter=${encodeURIComponent('#sales')}&roleFilter=${encodeURIComponent('#emea')}&limit=100`,
    );

    expect(names(response).sort()).toEqual(['list-01', 'list-06', 'list-11', 'list-16', 'list-21']);
  });

  it('matches any role with roleSemantic=AnyOf, and unions in @ids', async () => {
    const response = await list(
      `roleFilter=${encodeURIComponent('#eng')}&roleFilter=${encodeURIComponent(`@${ids.get('list-00')}`)}&roleSemantic=AnyOf&limit=100`,
    );

    expect(names(response).sort()).toEqual([
      'list-00',
      'list-02',
      'list-03',
      'list-07',
      'list-08',
      'list-12',
      'list-13',
      'list-17',
      'list-18',
      'list-22',
      'list-23',
    ]);
  });

  it('combines with a filter', async () => {
    const response = await list(
      `roleFilter=${encodeURIComponent('#eng')}&${filter('defaultHostingCost < 10')}&limit=100`,
    );

    expect(names(response).sort()).toEqual(['list-02', 'list-03', 'list-07', 'list-08']);
  });

  it('refuses a role without # or @, and an unknown semantic', async () => {
    expect((await list('roleFilter=sales')).status).toBe(400);
    expect((await list(`roleFilter=${encodeURIComponent('#sales')}&roleSemantic=Most`)).body.error.cause.field).toBe(
      'roleSemantic',
    );
  });
});

describe('the role-attribute index follows every change', () => {
  it('moves an identity between role filters when its attributes change, and forgets attributes no one holds', async () => {
    const id = await createdId('/identities', {
      name: 'mover',
      type: 'User',
      isAdmin: false,
      roleAttributes: ['temp-role', 'sales'],
    });
    const byRole = async (role: string) => names(await list(`roleFilter=${encodeURIComponent(`#${role}`)}&limit=100`));

    expect(await byRole('temp-role')).toEqual(['mover']);
    expect((await list('', '/identity-role-attributes')).body.data).toContain('temp-role');

    await call('PATCH', `/identities/${id}`, { roleAttributes: ['fresh-role'] });
    expect(await byRole('temp-role')).toEqual([]);
    expect(await byRole('fresh-role')).toEqual(['mover']);
    expect(await byRole('sales')).not.toContain('mover');
    expect((await list('', '/identity-role-attributes')).body.data).toEqual(['emea', 'eng', 'fresh-role', 'sales']);

    await call('DELETE', `/identities/${id}`);
    expect(await byRole('fresh-role')).toEqual([]);
    expect((await list('', '/identity-role-attributes')).body.data).toEqual(['emea', 'eng', 'sales']);
  });

  it('pages role-filtered results in id order without reading the rest', async () => {
    const all = await list(`roleFilter=${encodeURIComponent('#eng')}&limit=100`);
    const page = await list(`roleFilter=${encodeURIComponent('#eng')}&limit=3&offset=2`);

    expect(page.body.data.map((i: { id: string }) => i.id)).toEqual(
      all.body.data.slice(2, 5).map((i: { id: string }) => i.id),
    );
    expect(page.body.meta.pagination).toEqual({ limit: 3, offset: 2, totalCount: all.body.data.length });
  });

  it('leaves out @ids of identities that do not exist', async () => {
    const response = await list(
      `roleFilter=${encodeURIComponent('@no-such-id')}&roleFilter=${encodeURIComponent(`@${ids.get('list-04')}`)}`,
    );

    expect(names(response)).toEqual(['list-04']);
  });
});

describe('role attributes in use', () => {
  it('lists each attribute once, filterable by id', async () => {
    const all = await list('', '/identity-role-attributes');
    const some = await list(filter('id contains "e"'), '/identity-role-attributes');

    expect(all.status).toBe(200);
    expect(all.body.data).toEqual(['emea', 'eng', 'sales']);
    expect(all.body.meta.pagination.totalCount).toBe(3);
    expect(some.body.data).toEqual(['emea', 'eng', 'sales']);
    expect((await list(filter('id = "eng"'), '/identity-role-attributes')).body.data).toEqual(['eng']);
    expectMatchesSpec('management', 'GET', '/identity-role-attributes', 200, all.body);
  });
});

describe('identity types and summary', () => {
  it('lists the seeded identity types and retrieves one', async () => {
    const types = await list('', '/identity-types');
    const router = await call('GET', '/identity-types/Router');
    const missing = await call('GET', '/identity-types/Robot');

    expect(types.body.data.map((t: { name: string }) => t.name).sort()).toEqual(['Default', 'Router']);
    expectMatchesSpec('management', 'GET', '/identity-types', 200, types.body);
    expect(router.body.data).toMatchObject({ id: 'Router', name: 'Router' });
    expectMatchesSpec('management', 'GET', '/identity-types/{id}', 200, router.body);
    expect(missing.status).toBe(404);
  });

  it('counts the entities of each type', async () => {
    const response = await call('GET', '/summary');

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ identities: 25, identityTypes: 2, authPolicies: 1 });
    expectMatchesSpec('management', 'GET', '/summary', 200, response.body);
  });
});
