import { describe, expect, it } from 'vitest';
import { compareForSort } from '#shared/query/compare-for-sort.ts';
import { parseSort } from '#shared/query/parse-sort.ts';
import { FIELDS } from './filter-arbitraries.ts';

type Row = Readonly<Record<string, unknown>>;

function sortedIds(rows: readonly Row[], sort: string, withFields = true): unknown[] {
  return rows.toSorted(compareForSort(parseSort(sort), withFields ? FIELDS : undefined)).map((row) => row.id);
}

describe('compareForSort', () => {
  it('orders strings by UTF-16 code units', () => {
    const rows = [
      { id: '1', name: 'b' },
      { id: '2', name: 'B' },
      { id: '3', name: 'a' },
      { id: '4', name: 'ä' },
    ];
    expect(sortedIds(rows, 'name')).toEqual(['2', '3', '1', '4']);
    expect(sortedIds(rows, 'name desc')).toEqual(['4', '1', '3', '2']);
  });

  it('orders numbers numerically', () => {
    const rows = [
      { id: 'a', age: 10 },
      { id: 'b', age: 9 },
      { id: 'c', age: -1.5 },
    ];
    expect(sortedIds(rows, 'age')).toEqual(['c', 'b', 'a']);
  });

  it('orders false before true', () => {
    expect(
      sortedIds(
        [
          { id: 'a', isAdmin: true },
          { id: 'b', isAdmin: false },
        ],
        'isAdmin',
      ),
    ).toEqual(['b', 'a']);
  });

  it('sorts missing and null values first ascending and last descending, alike', () => {
    const rows = [{ id: 'a', name: 'x' }, { id: 'b' }, { id: 'c', name: null }, { id: 'd', name: 'a' }];
    expect(sortedIds(rows, 'name')).toEqual(['b', 'c', 'd', 'a']);
    expect(sortedIds(rows, 'name desc')).toEqual(['a', 'd', 'b', 'c']);
  });

  it('compares date-time strings of datetime fields and Dates as instants', () => {
    const rows = [
      { id: 'a', createdAt: '2024-03-01T11:30:00+02:00' },
      { id: 'b', createdAt: '2024-03-01T10:00:00Z' },
      { id: 'c', createdAt: new Date('2024-03-01T09:45:00Z') },
    ];
    expect(sortedIds(rows, 'createdAt')).toEqual(['a', 'c', 'b']);
  });

  it('compares date-time strings as strings when the fields are not given', () => {
    const rows = [
      { id: 'a', createdAt: '2024-03-01T11:30:00+02:00' },
      { id: 'b', createdAt: '2024-03-01T10:00:00Z' },
    ];
    expect(sortedIds(rows, 'createdAt', false)).toEqual(['b', 'a']);
  });

  it('uses later fields to break ties, then id', () => {
    const rows = [
      { id: 'd', type: 'x', name: 'b' },
      { id: 'c', type: 'x', name: 'a' },
      { id: 'b', type: 'w', name: 'z' },
      { id: 'a', type: 'x', name: 'a' },
    ];
    expect(sortedIds(rows, 'type desc, name')).toEqual(['a', 'c', 'd', 'b']);
    expect(sortedIds(rows, '')).toEqual(['a', 'b', 'c', 'd']);
  });

  it('reads dotted fields', () => {
    const rows = [
      { id: 'a', tags: { tier: 2 } },
      { id: 'b', tags: { tier: 1 } },
    ];
    expect(sortedIds(rows, 'tags.tier')).toEqual(['b', 'a']);
  });

  it('orders values of different kinds by kind', () => {
    const rows = [
      { id: 'a', v: 'text' },
      { id: 'b', v: 1 },
      { id: 'c', v: true },
      { id: 'd', v: null },
      { id: 'e', v: { nested: 1 } },
      { id: 'f', v: new Date(0) },
      { id: 'g', v: Number.NaN },
    ];
    expect(sortedIds(rows, 'v', false)).toEqual(['d', 'c', 'b', 'f', 'a', 'e', 'g']);
  });
});
