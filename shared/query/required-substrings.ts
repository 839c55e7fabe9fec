import type { BoolExpr, ContainsExpr } from './filter-ast.ts';

/**
 * Texts that some field value of every record a filter matches contains: the needles of its `contains` conditions
 * that must all hold (the filter itself, or the operands of a top-level `and`, nested `and`s included). A store can
 * hand them to its reads so that only records holding them all come back; the filter still decides, so a needle may
 * over-select but must never drop a match. Hence only the conditions whose match implies the needle as written:
 *
 * - `contains` not negated: the value holds the needle (a number's decimal text, as the filter compares it);
 * - `icontains` not negated, only for a needle of ASCII characters without letters: its case folding is the needle
 *   itself, and no lower-casing of any character yields an ASCII non-letter, so the value holds it as written;
 * - nothing under `or` or `not`, and no needle holding a UTF-16 surrogate (half a character, which an encoding of the
 *   value would not show on its own).
 */
export function requiredSubstrings(where: BoolExpr | undefined): string[] {
  if (where === undefined) return [];
  if (where.kind === 'and') return [...new Set(where.operands.flatMap(requiredSubstrings))];
  if (where.kind !== 'contains') return [];
  const needle = needleOf(where);
  return needle === undefined ? [] : [needle];
}

const SURROGATE = /[\uD800-\uDFFF]/;
const ASCII_WITHOUT_LETTERS = /^[\x20-\x40\x5B-\x60\x7B-\x7E]*$/;

function needleOf(expr: ContainsExpr): string | undefined {
  if (expr.negated) return undefined;
  const needle = String(expr.value.value);
  if (needle === '' || SURROGATE.test(needle)) return undefined;
  if (expr.caseInsensitive && !ASCII_WITHOUT_LETTERS.test(needle)) return undefined;
  return needle;
}
