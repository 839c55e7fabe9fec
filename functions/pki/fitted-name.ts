/** The longest an identity name may be (the API's name rule), in UTF-16 units as the schema counts them. */
export const MAX_NAME_LENGTH = 255;

/**
 * `name`, trimmed and cut (between characters, never inside a surrogate pair) so that `suffix` still fits the name
 * rule after it. The cut walks the characters once and stops at the room left: a claim or common name of any length
 * costs only the characters kept, never a pass per character dropped.
 */
export function fittedName(name: string, suffix: string): string {
  const room = MAX_NAME_LENGTH - suffix.length;
  const trimmed = name.trim();
  if (trimmed.length <= room) return `${trimmed}${suffix}`;
  let end = 0;
  for (const character of trimmed) {
    if (end + character.length > room) break;
    end += character.length;
  }
  return `${trimmed.slice(0, end).trimEnd()}${suffix}`;
}
