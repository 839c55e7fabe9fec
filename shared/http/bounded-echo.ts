/**
 * The most characters of one value an error answer repeats. Errors echo what was sent (`cause.value`) and name it in
 * their message and reason, which helps a caller find its mistake; a megabyte field echoed back twice helps nobody and
 * makes a small request a large answer.
 */
export const MAX_ECHOED_CHARACTERS = 256;

/** `text` cut to {@link MAX_ECHOED_CHARACTERS} (never inside a surrogate pair), saying how much was left out. */
export function boundedText(text: string): string {
  if (text.length <= MAX_ECHOED_CHARACTERS) return text;
  const last = text.charCodeAt(MAX_ECHOED_CHARACTERS - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? MAX_ECHOED_CHARACTERS - 1 : MAX_ECHOED_CHARACTERS;
  return `${text.slice(0, end)}…(${text.length - end} more characters)`;
}

/**
 * A value as an error answer may echo it: text cut by {@link boundedText}, a list to the leading items that fit the
 * same bound (then a marker saying how many were left out), anything else larger than the bound as its JSON cut.
 */
export function boundedEcho(value: unknown): unknown {
  if (typeof value === 'string') return boundedText(value);
  if (value === null || typeof value !== 'object') return value;
  const json = JSON.stringify(value);
  if (json === undefined || json.length <= MAX_ECHOED_CHARACTERS) return value;
  if (!Array.isArray(value)) return boundedText(json);
  const kept: unknown[] = [];
  let used = 2;
  for (const item of value) {
    const size = (JSON.stringify(item) ?? 'null').length + 1;
    if (used + size > MAX_ECHOED_CHARACTERS) break;
    kept.push(item);
    used += size;
  }
  return [...kept, `…(${value.length - kept.length} more items)`];
}

/** Each field of an error's cause echoed within the bound (see {@link boundedEcho}). */
export function boundedCause(cause: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(cause).map(([key, value]) => [key, boundedEcho(value)]));
}
