/**
 * String formats used by the OpenZiti documents, for ajv (no ajv-formats dependency).
 *
 * Checked: `date-time` (RFC 3339 §5.6 `date-time`, e.g. Go's `time.RFC3339Nano` output) and `uuid`
 * (8-4-4-4-12 hex, any version, any case). Every other format named in a document (`uri`, `url`, `int64`,
 * `int32`, `byte`, `email`, `password`, ...) is accepted unchecked — see {@link UNCHECKED_FORMAT}.
 *
 * @module
 */

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * RFC 3339 `date-time`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, with calendar-valid day, hour ≤ 23,
 * minute ≤ 59, second ≤ 60 (leap second). `T`/`Z` may be lower case (RFC 3339 §5.6 NOTE); a space separator is not
 * accepted.
 */
export function isRfc3339DateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 60) return false;
  if (m[7] !== undefined && (Number(m[7]) > 23 || Number(m[8]) > 59)) return false;
  return true;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Textual UUID, any version/variant, any case. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** The formats that are actually checked, by name. */
export const CHECKED_FORMATS: Readonly<Record<string, (value: string) => boolean>> = {
  'date-time': isRfc3339DateTime,
  uuid: isUuid,
};

/** ajv format definition that accepts everything (for formats we deliberately do not check). */
export const UNCHECKED_FORMAT = true;
