import { describe, expect, it } from 'vitest';
import { instantOf } from '#shared/query/instant-of.ts';
import { parseInstant } from '#shared/query/parse-instant.ts';

describe('parseInstant', () => {
  it.each([
    '2024-01-31T12:00:00Z',
    '2024-01-31T12:00:00.5Z',
    '2024-01-31T12:00:00.123+05:45',
    '2024-12-31T23:59:59-12:00',
    '1970-01-01T00:00:00Z',
    '1969-07-20T20:17:40Z',
    '2024-02-29T00:00:00Z',
    '2000-02-29T00:00:00Z',
  ])('agrees with Date.parse on %s', (text) => {
    expect(parseInstant(text)).toBe(Date.parse(text));
  });

  it('accepts lower-case t and z', () => {
    expect(parseInstant('2024-01-31t12:00:00z')).toBe(Date.parse('2024-01-31T12:00:00Z'));
  });

  it('reads years below 100 as such, not as 19xx', () => {
    expect(parseInstant('0050-01-01T00:00:00Z')).toBe(new Date('0050-01-01T00:00:00Z').getTime());
    expect(new Date(parseInstant('0001-01-01T00:00:00Z') ?? 0).getUTCFullYear()).toBe(1);
  });

  it('keeps fractions down to a microsecond and reads milliseconds exactly', () => {
    const base = Date.parse('2024-01-31T12:00:00Z');
    expect(parseInstant('2024-01-31T12:00:00.007Z')).toBe(base + 7);
    expect(parseInstant('2024-01-31T12:00:00.0075Z')).toBe(base + 7.5);
    expect(parseInstant('2024-01-31T12:00:00.000001Z')).toBeGreaterThan(base);
  });

  it('rolls a leap second over into the next minute', () => {
    expect(parseInstant('2016-12-31T23:59:60Z')).toBe(Date.parse('2017-01-01T00:00:00Z'));
  });

  it.each([
    '2024-01-31T12:00:00',
    '2024-01-31 12:00:00Z',
    '2024-01-31',
    '24-01-31T12:00:00Z',
    '2024-1-31T12:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-00-01T00:00:00Z',
    '2024-01-00T00:00:00Z',
    '2024-01-32T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-01-31T24:00:00Z',
    '2024-01-31T12:60:00Z',
    '2024-01-31T12:00:61Z',
    '2024-01-31T12:00:00.Z',
    '2024-01-31T12:00:00+24:00',
    '2024-01-31T12:00:00+01:60',
    '2024-01-31T12:00:00+0100',
    ' 2024-01-31T12:00:00Z',
  ])('rejects %j', (text) => {
    expect(parseInstant(text)).toBeUndefined();
  });
});

describe('instantOf', () => {
  it('reads Dates and RFC 3339 strings', () => {
    expect(instantOf(new Date(5))).toBe(5);
    expect(instantOf('1970-01-01T00:00:00.005Z')).toBe(5);
  });

  it('is undefined for invalid Dates, other strings and other types', () => {
    expect(instantOf(new Date(Number.NaN))).toBeUndefined();
    expect(instantOf('2024-01-31')).toBeUndefined();
    expect(instantOf(5)).toBeUndefined();
    expect(instantOf(null)).toBeUndefined();
    expect(instantOf({})).toBeUndefined();
  });
});
