import { describe, expect, it } from 'vitest';
import type { BoolExpr } from '#shared/query/filter-ast.ts';
import { matchesFilter } from '#shared/query/matches-filter.ts';
import { parseFilter } from '#shared/query/parse-filter.ts';

const identity: Readonly<Record<string, unknown>> = {
  id: 'i1',
  name: 'Web Server',
  code: 'a42b',
  age: 42,
  isAdmin: true,
  disabled: false,
  createdAt: '2024-03-01T10:00:00.000Z',
  updatedAt: new Date('2024-03-02T10:00:00.000Z'),
  badDate: 'yesterday',
  roleAttributes: ['web', 'prod'],
  noRoles: [],
  tags: { env: 'prod', tier: 2, public: true, nothing: null },
  nothing: null,
};

function matches(text: string, record: Readonly<Record<string, unknown>> = identity): boolean {
  return matchesFilter(parseFilter(text).where, record);
}

function expectMatches(cases: readonly (readonly [string, boolean])[]): void {
  for (const [text, expected] of cases) expect({ text, matches: matches(text) }).toEqual({ text, matches: expected });
}

describe('matchesFilter', () => {
  it('matches every record when there is no condition', () => {
    expect(matchesFilter(undefined, identity)).toBe(true);
    expect(matchesFilter(parseFilter('sort by name').where, {})).toBe(true);
  });

  it('compares strings exactly, case-sensitively and by UTF-16 code units', () => {
    expectMatches([
      ['name = "Web Server"', true],
      ['name = "web server"', false],
      ['name != "web server"', true],
      ['name < "a"', true],
      ['name > "Web"', true],
      ['name >= "Web Server"', true],
      ['name <= "Web Serve"', false],
    ]);
    expect(matches('name < "\uffff"', { name: '\u{1f600}' })).toBe(true);
  });

  it('compares numbers numerically', () => {
    expectMatches([
      ['age = 42', true],
      ['age = 42.0', true],
      ['age = 4.2e1', true],
      ['age != 42', false],
      ['age > 41.5', true],
      ['age >= 42', true],
      ['age < 42', false],
      ['age <= 42', true],
    ]);
    expect(matches('n > 9', { n: 10 })).toBe(true);
  });

  it('reads a bare boolean field as field = true', () => {
    expectMatches([
      ['isAdmin', true],
      ['disabled', false],
      ['isAdmin = true', true],
      ['isAdmin = false', false],
      ['disabled = false', true],
      ['isAdmin != false', true],
      ['tags.public', true],
    ]);
    expect(matches('isAdmin', { isAdmin: 'true' })).toBe(false);
  });

  it('matches = null for missing and null fields, != null for present ones', () => {
    expectMatches([
      ['nothing = null', true],
      ['missing = null', true],
      ['name = null', false],
      ['nothing != null', false],
      ['missing != null', false],
      ['name != null', true],
      ['disabled != null', true],
      ['tags.nothing = null', true],
      ['tags.env.deeper = null', true],
    ]);
  });

  it('matches only the negated forms on missing and null fields', () => {
    expectMatches([
      ['missing = "x"', false],
      ['missing != "x"', true],
      ['nothing != 1', true],
      ['missing < "x"', false],
      ['missing >= "x"', false],
      ['missing contains "x"', false],
      ['missing not contains "x"', true],
      ['missing icontains "x"', false],
      ['missing not icontains "x"', true],
      ['missing in ["x"]', false],
      ['missing not in ["x"]', true],
      ['missing between 1 and 2', false],
      ['missing not between 1 and 2', true],
      ['missing', false],
    ]);
  });

  it('treats a value of another type like a missing one', () => {
    expectMatches([
      ['age = "42"', false],
      ['age != "42"', true],
      ['name = 42', false],
      ['age contains "4"', false],
      ['badDate < datetime(2030-01-01T00:00:00Z)', false],
      ['badDate != datetime(2030-01-01T00:00:00Z)', true],
    ]);
  });

  it('finds substrings with contains and, ignoring case, with icontains', () => {
    expectMatches([
      ['name contains "Serv"', true],
      ['name contains "serv"', false],
      ['name contains ""', true],
      ['name icontains "SERV"', true],
      ['name not contains "x"', true],
      ['name not contains "Web"', false],
      ['name not icontains "web"', false],
      ['code contains 42', true],
      ['code contains 43', false],
    ]);
  });

  it('matches in against any value of the list', () => {
    expectMatches([
      ['name in ["a", "Web Server"]', true],
      ['name in ["a", "b"]', false],
      ['name not in ["a", "b"]', true],
      ['age in [1, 42]', true],
      ['age not in [1, 42]', false],
      ['createdAt in [datetime(2024-03-01T11:00:00+01:00)]', true],
    ]);
  });

  it('matches between from the lower bound up to, not including, the upper bound', () => {
    expectMatches([
      ['age between 42 and 43', true],
      ['age between 41 and 42', false],
      ['age between 40 and 50', true],
      ['age not between 41 and 42', true],
      ['age not between 42 and 43', false],
      ['createdAt between datetime(2024-03-01T10:00:00Z) and datetime(2024-03-01T10:00:01Z)', true],
      ['createdAt between datetime(2024-03-01T09:00:00Z) and datetime(2024-03-01T10:00:00Z)', false],
    ]);
  });

  it('compares date-times as instants, whatever their offset or precision', () => {
    expectMatches([
      ['createdAt = datetime(2024-03-01T12:00:00+02:00)', true],
      ['createdAt = datetime(2024-03-01T10:00:00Z)', true],
      ['createdAt != datetime(2024-03-01T10:00:00.001Z)', true],
      ['createdAt > datetime(2024-03-01T09:59:59.999Z)', true],
      ['createdAt < datetime(2024-03-01T10:00:00.0001Z)', true],
      ['createdAt <= datetime(2024-03-01T04:30:00-05:30)', true],
      ['updatedAt = datetime(2024-03-02T10:00:00Z)', true],
      ['updatedAt > datetime(2024-03-02T10:00:00+00:01)', true],
    ]);
    expect(matches('t = datetime(2024-03-01T10:00:00Z)', { t: new Date(Number.NaN) })).toBe(false);
  });

  it('matches anyOf when some element does and allOf when every element does', () => {
    expectMatches([
      ['anyOf(roleAttributes) = "web"', true],
      ['anyOf(roleAttributes) = "db"', false],
      ['allOf(roleAttributes) = "web"', false],
      ['allOf(roleAttributes) in ["web", "prod"]', true],
      ['anyOf(roleAttributes) != "web"', true],
      ['allOf(roleAttributes) != "db"', true],
      ['anyOf(roleAttributes) contains "ro"', true],
      ['allOf(roleAttributes) icontains "E"', false],
      ['allOf(roleAttributes) > "a"', true],
    ]);
  });

  it('never matches anyOf or allOf on an empty or missing set', () => {
    expectMatches([
      ['anyOf(noRoles) = "web"', false],
      ['anyOf(noRoles) != "web"', false],
      ['allOf(noRoles) = "web"', false],
      ['allOf(noRoles) != "web"', false],
      ['allOf(missing) not in ["x"]', false],
    ]);
  });

  it('counts set elements and finds empty sets', () => {
    expectMatches([
      ['count(roleAttributes) = 2', true],
      ['count(roleAttributes) > 2', false],
      ['count(roleAttributes) between 1 and 3', true],
      ['count(noRoles) = 0', true],
      ['count(missing) = 0', true],
      ['isEmpty(roleAttributes)', false],
      ['isEmpty(noRoles)', true],
      ['isEmpty(missing)', true],
      ['isEmpty(nothing)', true],
      ['not isEmpty(roleAttributes)', true],
    ]);
  });

  it('reads dotted fields from nested objects', () => {
    expectMatches([
      ['tags.env = "prod"', true],
      ['tags.tier > 1', true],
      ['tags.tier = "2"', false],
      ['tags.missing != "x"', true],
      ['name.length = 10', false],
    ]);
  });

  it('never reads inherited properties', () => {
    expectMatches([
      ['constructor = null', true],
      ['tags.constructor = null', true],
      ['toString != null', false],
    ]);
    const protoIsNull: BoolExpr = {
      kind: 'equals',
      lhs: { kind: 'field', field: '__proto__', position: 0 },
      negated: false,
      value: { type: 'null', position: 0 },
    };
    expect(matchesFilter(protoIsNull, identity)).toBe(true);
  });

  it('combines conditions with and, or and not', () => {
    expectMatches([
      ['age = 1 or age = 42 and isAdmin', true],
      ['(age = 1 or age = 42) and disabled', false],
      ['age = 1 or age = 42 and disabled', false],
      ['not age = 42 and disabled', true],
      ['(not age = 42) and disabled', false],
      ['not not isAdmin', true],
      ['true and not false', true],
    ]);
  });
});
