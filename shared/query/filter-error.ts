/**
 * A filter, sort or validation problem, located in the text the caller sent. The message reads like
 * `unexpected 'NH' at line 1, column 24: expected an operator such as =, !=, contains, in`, so it can be returned
 * to API clients as is.
 */
export class FilterError extends Error {
  override readonly name = 'FilterError';
  /** 0-based offset into the text, in UTF-16 code units. */
  readonly position: number;
  /** 1-based line; a line ends at LF, CR LF or a lone CR. */
  readonly line: number;
  /** 1-based column, in UTF-16 code units. */
  readonly column: number;

  /**
   * @param text - the text the position points into.
   * @param position - 0-based offset of the offending symbol.
   * @param problem - what is wrong, e.g. `unexpected 'NH'`.
   * @param expected - what would have been accepted instead, if that helps, e.g. `an operator such as =`.
   */
  constructor(text: string, position: number, problem: string, expected?: string) {
    const { line, column } = lineAndColumn(text, position);
    super(`${problem} at line ${line}, column ${column}${expected === undefined ? '' : `: expected ${expected}`}`);
    this.position = position;
    this.line = line;
    this.column = column;
  }
}

function lineAndColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(position, text.length);
  for (let i = 0; i < end; i++) {
    const char = text[i];
    if (char === '\n' || (char === '\r' && text[i + 1] !== '\n')) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: position - lineStart + 1 };
}
