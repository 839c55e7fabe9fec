/**
 * The one rule for a role attribute's text, wherever one is written: an entity's `roleAttributes`, a policy's
 * `#attribute` and `@id` roles, a CA's `identityRoles`, attributes an external JWT hands to token enrollment.
 *
 * 1–255 characters, no leading or trailing space, no comma (the `ziti` CLI and the console split lists on commas, so
 * `#a,#b` would read as two roles and match as one), and no control or invisible formatting characters: NUL, line
 * breaks, zero-width characters and the bidirectional overrides (U+202A–U+202E, U+2066–U+2069) that make an
 * attribute display as another. `all`, in any case, is reserved: `#all` selects every entity.
 */

/** Control (Cc), format (Cf: zero-width, bidi overrides), separators other than the plain space, and commas. */
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp},]|[\p{Zs}--[ ]]/v;

export const MAX_ROLE_ATTRIBUTE_LENGTH = 255;

/** Why `text` cannot be a role attribute (or, `asId`, the id of an `@id` role), or undefined when it can. */
export function roleAttributeProblem(text: string, asId = false): string | undefined {
  if (text.length === 0 || text.length > MAX_ROLE_ATTRIBUTE_LENGTH) {
    return `must be 1 to ${MAX_ROLE_ATTRIBUTE_LENGTH} characters`;
  }
  if (text.trim() !== text) return 'may not start or end with a space';
  if (FORBIDDEN.test(text)) return 'may not hold commas, control or invisible formatting characters';
  if (!asId && text.toLowerCase() === 'all') return "'all' is reserved (#all selects every entity)";
  return undefined;
}

/** The attributes that follow the rule, each once, in the order first given: for values no caller typed (JWT claims). */
export function usableRoleAttributes(values: readonly unknown[], max: number): string[] {
  const usable = values.filter(
    (value): value is string => typeof value === 'string' && !/^[#@]/.test(value) && !roleAttributeProblem(value),
  );
  return [...new Set(usable)].slice(0, max);
}
