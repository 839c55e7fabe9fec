import { describe, expect, it } from 'vitest';
import { FilterError } from '#shared/query/filter-error.ts';
import { MAX_FILTER_LENGTH, MAX_NESTING_DEPTH } from '#shared/query/filter-parser.ts';
import { parseFilter } from '#shared/query/parse-filter.ts';

/** The FilterError that parsing the text throws. */
function errorOf(text: string): FilterError {
  try {
    parseFilter(text);
  } catch (error) {
    if (error instanceof FilterError) return error;
    throw error;
  }
  throw new Error(`parsed without error: ${text}`);
}

describe('parseFilter error positions', () => {
  it.each([
    // text, position, line, column, message
    [
      'name = "x" and type NH',
      20,
      1,
      21,
      "unexpected 'NH' at line 1, column 21: expected an operator such as =, !=, <, <=, >, >=, contains, icontains, in or between",
    ],
    ['name = "x"\nand age >\n  true', 23, 3, 3, "unexpected 'true' at line 3, column 3: expected a string, a number"],
    ['a = 1\r\nand b ~ 2', 13, 2, 7, "unexpected character '~' at line 2, column 7"],
    ['a = 1\rand b ~ 2', 12, 2, 7, "unexpected character '~' at line 2, column 7"],
    ['name = "abc', 7, 1, 8, "unterminated string at line 1, column 8: expected a closing '\"'"],
    [String.raw`name = "a\qb"`, 9, 1, 10, "invalid escape '\\' followed by 'q' in a string at line 1, column 10"],
    ['name = "a\u0001b"', 9, 1, 10, 'unexpected control character U+0001 in a string at line 1, column 10'],
    ['name = "a\nb"', 9, 1, 10, 'unexpected control character U+000A in a string'],
    ['age = 1.', 7, 1, 8, "unexpected character '.' after the number 1 at line 1, column 8: expected digits"],
    ['age = 12abc', 8, 1, 9, "unexpected character 'a' after the number 12"],
    ['age = -', 6, 1, 7, "unexpected character '-' at line 1, column 7: expected a digit after '-'"],
    [
      'age ! 1',
      4,
      1,
      5,
      "unexpected character '!' at line 1, column 5: expected '!=' (to negate a condition, use not)",
    ],
    ['name = #', 7, 1, 8, "unexpected character '#' at line 1, column 8"],
    ['name\u00a0= "x"', 4, 1, 5, 'unexpected character U+00A0 at line 1, column 5'],
    ["'na me' = 1", 0, 1, 1, 'invalid quoted field name at line 1, column 1'],
    ['tags. = 1', 5, 1, 6, "invalid field name 'tags.' at line 1, column 6: expected a letter after '.'"],
    ['t = datetime(2024-01-31T12:00:00)', 13, 1, 14, "invalid date-time '2024-01-31T12:00:00' at line 1, column 14"],
    ['t = datetime(2024-02-30T12:00:00Z)', 13, 1, 14, "invalid date-time '2024-02-30T12:00:00Z'"],
    [
      't = datetime(2024-01-31T12:00:00Z',
      4,
      1,
      5,
      "unterminated datetime( at line 1, column 5: expected a closing ')'",
    ],
    ['(a = 1', 6, 1, 7, "unexpected end of text at line 1, column 7: expected 'and', 'or' or ')'"],
    [
      'a = 1)',
      5,
      1,
      6,
      "unexpected ')' at line 1, column 6: expected 'and', 'or', 'sort by', 'skip', 'limit' or the end",
    ],
    ['a = 1 and', 9, 1, 10, 'unexpected end of text at line 1, column 10: expected a condition such as name = "x"'],
    ['a =', 3, 1, 4, 'unexpected end of text at line 1, column 4: expected a string, a number or datetime(…), true'],
    ['a not = 1', 6, 1, 7, "unexpected '=' at line 1, column 7: expected 'contains', 'icontains', 'in' or 'between'"],
    ['sort name', 5, 1, 6, "unexpected 'name' at line 1, column 6: expected 'by' after 'sort'"],
    ['sort by name desc asc', 18, 1, 19, "unexpected 'asc' at line 1, column 19: expected ',', 'skip', 'limit' or the"],
    ['sort by none', 8, 1, 9, "('none' is a keyword: quote it as 'none' to use it as a field name)"],
    ['count(x from) > 1', 8, 1, 9, "unexpected 'from' at line 1, column 9: expected ')'"],
  ])('locates the error in %j', (text, position, line, column, message) => {
    const error = errorOf(text);
    expect(error).toMatchObject({ name: 'FilterError', position, line, column });
    expect(error.message).toContain(message);
  });

  it('quotes long tokens shortened', () => {
    expect(errorOf(`a = 1 "${'x'.repeat(100)}"`).message).toContain(`unexpected '"${'x'.repeat(31)}…'`);
  });

  it('is an Error with a FilterError name', () => {
    const error = errorOf('?');
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toMatch(/^FilterError: unexpected character '\?' at line 1, column 1/);
  });
});

describe('parseFilter limits', () => {
  it('accepts text of the maximum length', () => {
    const text = `name = "${'x'.repeat(MAX_FILTER_LENGTH - 9)}"`;
    expect(text).toHaveLength(MAX_FILTER_LENGTH);
    expect(parseFilter(text).where).toMatchObject({ kind: 'equals' });
  });

  it('rejects longer text, pointing just past the limit', () => {
    const error = errorOf(`name = "${'x'.repeat(MAX_FILTER_LENGTH)}"`);
    expect(error.position).toBe(MAX_FILTER_LENGTH);
    expect(error.message).toContain('the text is too long (4105 characters)');
    expect(error.message).toContain('expected at most 4096 characters');
  });

  it('accepts nesting up to the maximum depth', () => {
    const depth = MAX_NESTING_DEPTH;
    expect(parseFilter(`${'('.repeat(depth)}a = 1${')'.repeat(depth)}`).where).toMatchObject({ kind: 'equals' });
    expect(parseFilter(`${'not '.repeat(depth)}a = 1`).where).toMatchObject({ kind: 'not' });
  });

  it('rejects deeper nesting of parentheses or not, pointing at the first level too many', () => {
    const depth = MAX_NESTING_DEPTH + 1;
    const parentheses = errorOf(`${'('.repeat(depth)}a = 1${')'.repeat(depth)}`);
    expect(parentheses).toMatchObject({ position: MAX_NESTING_DEPTH });
    expect(parentheses.message).toContain("'(' nests too deeply at line 1, column 65: expected at most 64 levels");
    expect(errorOf(`${'not '.repeat(depth)}a = 1`).position).toBe(4 * MAX_NESTING_DEPTH);
    expect(errorOf(`${'(not '.repeat(depth)}a = 1${')'.repeat(depth)}`).message).toContain('nests too deeply');
  });

  it('fails fast, without overflowing the stack, on pathological nesting', () => {
    expect(errorOf('('.repeat(MAX_FILTER_LENGTH)).message).toContain('nests too deeply');
    expect(errorOf('('.repeat(1_000_000)).message).toContain('too long');
  });
});
