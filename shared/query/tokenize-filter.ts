import type { OrderOperator } from './filter-ast.ts';
import { FilterError } from './filter-error.ts';
import { parseInstant } from './parse-instant.ts';

/** The reserved words of ZitiQL, lower-cased; they match in any case. */
const KEYWORDS = [
  'and',
  'or',
  'not',
  'in',
  'between',
  'contains',
  'icontains',
  'true',
  'false',
  'null',
  'allof',
  'anyof',
  'count',
  'isempty',
  'sort',
  'by',
  'asc',
  'desc',
  'skip',
  'limit',
  'none',
  'from',
  'where',
] as const;

/** A reserved word, lower-cased. */
export type Keyword = (typeof KEYWORDS)[number];

const KEYWORD_SET: ReadonlySet<string> = new Set(KEYWORDS);

/** Whether a word would be read as a keyword rather than a field name, so must be quoted to name a field. */
export function isKeyword(word: string): boolean {
  return KEYWORD_SET.has(word.toLowerCase());
}

interface TokenBase {
  /** The token's source text. */
  readonly text: string;
  /** 0-based offset of the token's first character. */
  readonly position: number;
}

/** One lexical token; the list ends with an `end` token at the end of the text. */
export type Token = TokenBase &
  (
    | { readonly kind: 'keyword'; readonly keyword: Keyword }
    | { readonly kind: 'identifier'; readonly name: string }
    | { readonly kind: 'string'; readonly value: string }
    | { readonly kind: 'number'; readonly value: number }
    | { readonly kind: 'datetime'; readonly value: string; readonly instant: number }
    | { readonly kind: 'operator'; readonly operator: '=' | '!=' | OrderOperator }
    | { readonly kind: 'punctuation'; readonly punctuation: '(' | ')' | '[' | ']' | ',' }
    | { readonly kind: 'end' }
  );

const WORD = /[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_-]*)*/y;
const QUOTED_IDENTIFIER = /'([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_-]*)*)'/y;
const NUMBER = /-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const NUMBER_TAIL = /[A-Za-z0-9_.]/;
const ESCAPES: ReadonlyMap<string, string> = new Map([
  ['"', '"'],
  ['\\', '\\'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
]);
const PUNCTUATION = new Set(['(', ')', '[', ']', ',']);

/** Whitespace as ZitiQL defines it: space, tab, CR and LF only. */
function isFilterWhitespace(char: string | undefined): boolean {
  return char === ' ' || char === '\t' || char === '\r' || char === '\n';
}

/**
 * Splits filter text into tokens. Numbers may have leading zeros and field names may contain digits after their
 * first letter: a harmless superset of the reference grammar.
 *
 * @throws FilterError for text that is no token at all: a stray character, an unterminated string, an invalid escape
 *   or date-time.
 */
export function tokenizeFilter(text: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  for (;;) {
    while (isFilterWhitespace(text[index])) index++;
    if (index >= text.length) {
      tokens.push({ kind: 'end', text: '', position: text.length });
      return tokens;
    }
    const token = readToken(text, index);
    tokens.push(token);
    index += token.text.length;
  }
}

function readToken(text: string, start: number): Token {
  const char = text[start] ?? '';
  const next = text[start + 1];
  if (PUNCTUATION.has(char)) {
    return { kind: 'punctuation', punctuation: char as '(' | ')' | '[' | ']' | ',', text: char, position: start };
  }
  if (char === '=') return { kind: 'operator', operator: '=', text: char, position: start };
  if (char === '<' || char === '>') {
    const operator = next === '=' ? (`${char}=` as const) : char;
    return { kind: 'operator', operator, text: operator, position: start };
  }
  if (char === '!') {
    if (next === '=') return { kind: 'operator', operator: '!=', text: '!=', position: start };
    throw new FilterError(text, start, "unexpected character '!'", "'!=' (to negate a condition, use not)");
  }
  if (char === '"') return readString(text, start);
  if (char === "'") return readQuotedIdentifier(text, start);
  if (char === '-' || (char >= '0' && char <= '9')) return readNumber(text, start);
  if (/[A-Za-z]/.test(char)) return readWord(text, start);
  throw new FilterError(
    text,
    start,
    `unexpected character ${describeCharacter(text, start)}`,
    'a field name, a value, an operator, a keyword or a parenthesis',
  );
}

function readString(text: string, start: number): Token {
  let value = '';
  let index = start + 1;
  while (index < text.length) {
    const char = text[index] ?? '';
    if (char === '"') return { kind: 'string', value, text: text.slice(start, index + 1), position: start };
    if (char === '\\') {
      const escaped = ESCAPES.get(text[index + 1] ?? '');
      if (escaped === undefined) {
        if (index + 1 >= text.length) break;
        throw new FilterError(
          text,
          index,
          `invalid escape '\\' followed by ${describeCharacter(text, index + 1)} in a string`,
          String.raw`one of \", \\, \f, \n, \r or \t`,
        );
      }
      value += escaped;
      index += 2;
    } else if (char < ' ') {
      throw new FilterError(
        text,
        index,
        `unexpected control character ${describeCharacter(text, index)} in a string`,
        String.raw`an escape such as \n or \t instead of a control character`,
      );
    } else {
      value += char;
      index++;
    }
  }
  throw new FilterError(text, start, 'unterminated string', "a closing '\"' before the end of the filter");
}

function readQuotedIdentifier(text: string, start: number): Token {
  const match = execAt(QUOTED_IDENTIFIER, text, start);
  if (match === null) {
    throw new FilterError(
      text,
      start,
      'invalid quoted field name',
      "a field name between single quotes, such as 'name' or 'tags.env' (strings take double quotes)",
    );
  }
  return { kind: 'identifier', name: match[1] ?? '', text: match[0], position: start };
}

function readNumber(text: string, start: number): Token {
  const match = execAt(NUMBER, text, start);
  if (match === null) throw new FilterError(text, start, "unexpected character '-'", "a digit after '-'");
  const [numberText] = match;
  const end = start + numberText.length;
  const following = text[end];
  if (following !== undefined && NUMBER_TAIL.test(following)) {
    throw new FilterError(
      text,
      end,
      `unexpected character ${describeCharacter(text, end)} after the number ${numberText}`,
      following === '.' ? 'digits after the decimal point' : 'a space or an operator after a number',
    );
  }
  const value = Number(numberText);
  if (!Number.isFinite(value)) throw new FilterError(text, start, `number ${numberText} is out of range`);
  return { kind: 'number', value, text: numberText, position: start };
}

function readWord(text: string, start: number): Token {
  const match = execAt(WORD, text, start);
  const word = match?.[0] ?? '';
  const end = start + word.length;
  if (text[end] === '.') {
    throw new FilterError(text, end + 1, `invalid field name '${word}.'`, "a letter after '.'");
  }
  if (text[end] === '(' && word.toLowerCase() === 'datetime') return readDatetime(text, start, end + 1);
  if (!word.includes('.') && isKeyword(word)) {
    return { kind: 'keyword', keyword: word.toLowerCase() as Keyword, text: word, position: start };
  }
  return { kind: 'identifier', name: word, text: word, position: start };
}

function readDatetime(text: string, start: number, contentStart: number): Token {
  const close = text.indexOf(')', contentStart);
  if (close === -1) throw new FilterError(text, start, 'unterminated datetime(', "a closing ')'");
  let from = contentStart;
  let to = close;
  while (from < to && isFilterWhitespace(text[from])) from++;
  while (to > from && isFilterWhitespace(text[to - 1])) to--;
  const value = text.slice(from, to);
  const instant = parseInstant(value);
  if (instant === undefined) {
    throw new FilterError(
      text,
      from,
      `invalid date-time '${truncate(value)}'`,
      'an RFC 3339 date-time with a time zone, such as datetime(2024-01-31T12:00:00Z) or ' +
        'datetime(2024-01-31T12:00:00.5+02:00)',
    );
  }
  return { kind: 'datetime', value, instant, text: text.slice(start, close + 1), position: start };
}

function execAt(pattern: RegExp, text: string, index: number): RegExpExecArray | null {
  pattern.lastIndex = index;
  return pattern.exec(text);
}

function describeCharacter(text: string, index: number): string {
  const codePoint = text.codePointAt(index) ?? 0;
  const char = String.fromCodePoint(codePoint);
  const code = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
  return /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(char) ? `'${char}'` : code;
}

/** Shortens text quoted in error messages. */
export function truncate(text: string, length = 32): string {
  return text.length <= length ? text : `${text.slice(0, length)}…`;
}
