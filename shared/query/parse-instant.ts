const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Reads an RFC 3339 date-time such as `2024-01-31T12:00:00.5+02:00` (the offset is mandatory) as an instant.
 *
 * @returns milliseconds since the Unix epoch, fractions of a millisecond kept to within a microsecond (a double's
 *   precision at today's dates); `undefined` when the text is not an RFC 3339 date-time or names a date or time that
 *   does not exist (e.g. February 30th, 24:00).
 */
export function parseInstant(text: string): number | undefined {
  const match = RFC3339.exec(text);
  if (match === null) return undefined;
  const group = (index: number): string => match[index] ?? '';
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((index) => Number(group(index))) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  if (group(8) === '') {
    const offsetHour = Number(group(10));
    const offsetMinute = Number(group(11));
    if (offsetHour > 23 || offsetMinute > 59) return undefined;
    offsetMinutes = (group(9) === '-' ? -1 : 1) * (offsetHour * 60 + offsetMinute);
  }
  const date = new Date(0);
  // setUTCFullYear rather than Date.UTC, which would read years 0–99 as 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  // A leap second (:60) rolls over into the next minute.
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime() + fractionMillis(group(7)) - offsetMinutes * 60_000;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function fractionMillis(digits: string): number {
  // Whole milliseconds separately, so that `.007` is exactly 7 rather than 0.007 * 1000 = 7.000000000000001.
  const whole = Number(digits.slice(0, 3).padEnd(3, '0'));
  const rest = digits.slice(3);
  return rest === '' ? whole : whole + Number(`0.${rest}`);
}
