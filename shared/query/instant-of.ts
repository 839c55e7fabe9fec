import { parseInstant } from './parse-instant.ts';

/**
 * The instant a record's date-time value stands for: a valid `Date`, or an RFC 3339 string with a time zone such as
 * `2024-01-31T12:00:00.000Z`.
 *
 * @returns milliseconds since the Unix epoch, or `undefined` for anything else.
 */
export function instantOf(value: unknown): number | undefined {
  if (value instanceof Date) {
    const time = value.getTime();
    return Number.isNaN(time) ? undefined : time;
  }
  return typeof value === 'string' ? parseInstant(value) : undefined;
}
