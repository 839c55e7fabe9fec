import type {
  BoolExpr,
  DatetimeLiteral,
  Literal,
  NumberLiteral,
  Operand,
  OrderedLiteral,
  ParsedFilter,
  SortField,
  StringLiteral,
} from './filter-ast.ts';
import { FilterError } from './filter-error.ts';
import { type Keyword, type Token, tokenizeFilter, truncate } from './tokenize-filter.ts';

/** Longest filter or sort text accepted, in UTF-16 code units. */
export const MAX_FILTER_LENGTH = 4096;

/** Deepest nesting of parentheses and `not` accepted; it bounds the recursion of every tree walk. */
export const MAX_NESTING_DEPTH = 64;

const OPERATORS = 'an operator such as =, !=, <, <=, >, >=, contains, icontains, in or between';
const ORDERED_VALUE = 'a string, a number or datetime(…)';

const isAnyLiteral = (_literal: Literal): _literal is Literal => true;
const isOrdered = (literal: Literal): literal is OrderedLiteral =>
  literal.type === 'string' || literal.type === 'number' || literal.type === 'datetime';
const isContainsValue = (literal: Literal): literal is StringLiteral | NumberLiteral =>
  literal.type === 'string' || literal.type === 'number';
const isString = (literal: Literal): literal is StringLiteral => literal.type === 'string';
const isRangeBound = (literal: Literal): literal is NumberLiteral | DatetimeLiteral =>
  literal.type === 'number' || literal.type === 'datetime';

/**
 * A recursive-descent parser over the tokens of one filter or sort text; use {@link parseFilter} or
 * {@link parseSort}. Precedence follows the reference controller's grammar: `and` binds tighter than `or`, and `not`
 * applies to everything after it up to the closing parenthesis or the end of the condition, so
 * `not a = 1 and b = 2` means `not (a = 1 and b = 2)`.
 */
export class FilterParser {
  private readonly text: string;
  private readonly tokens: readonly Token[];
  private index = 0;
  private depth = 0;

  /** @throws FilterError when the text is too long or holds something that is no token. */
  constructor(text: string) {
    if (text.length > MAX_FILTER_LENGTH) {
      throw new FilterError(
        text,
        MAX_FILTER_LENGTH,
        `the text is too long (${text.length} characters)`,
        `at most ${MAX_FILTER_LENGTH} characters`,
      );
    }
    this.text = text;
    this.tokens = tokenizeFilter(text);
  }

  /** Parses `[condition] [sort by …] [skip n] [limit n|none]`; blank text yields an empty filter. */
  parseFilter(): ParsedFilter {
    const text = this.text;
    const where = this.startsClause() ? undefined : this.parseOr();
    const sort = this.acceptKeyword('sort') ? this.parseSortBy() : [];
    const skip = this.acceptKeyword('skip') ? this.parseRowCount('skip') : undefined;
    const limit = this.acceptKeyword('limit') ? this.parseLimit() : undefined;

    const next = this.peek();
    if (isClauseKeyword(next)) {
      throw new FilterError(
        text,
        next.position,
        `'${next.text}' is out of place`,
        'the clauses in the order: condition, sort by, skip, limit',
      );
    }
    const expected: string[] = [];
    const clauses = sort.length > 0 || skip !== undefined || limit !== undefined;
    if (where !== undefined && !clauses) expected.push("'and'", "'or'", "'sort by'");
    if (sort.length > 0 && skip === undefined && limit === undefined) expected.push("','");
    if (skip === undefined && limit === undefined) expected.push("'skip'");
    if (limit === undefined) expected.push("'limit'");
    this.expectEnd(expected);
    return {
      text,
      ...(where === undefined ? {} : { where }),
      sort,
      ...(skip === undefined ? {} : { skip }),
      ...(limit === undefined ? {} : { limit }),
    };
  }

  /** Parses a bare sort order such as `name desc, createdAt`; blank text yields no sort fields. */
  parseSort(): SortField[] {
    if (this.peek().kind === 'end') return [];
    const fields = this.parseSortFields();
    this.expectEnd(["','"]);
    return fields;
  }

  private startsClause(): boolean {
    const token = this.peek();
    return token.kind === 'end' || isClauseKeyword(token);
  }

  private parseOr(): BoolExpr {
    const operands = [this.parseAnd()];
    while (this.acceptKeyword('or')) operands.push(this.parseAnd());
    return operands.length === 1 ? operands[0]! : { kind: 'or', operands };
  }

  private parseAnd(): BoolExpr {
    const operands = [this.parseUnary()];
    while (this.acceptKeyword('and')) operands.push(this.parseUnary());
    return operands.length === 1 ? operands[0]! : { kind: 'and', operands };
  }

  private parseUnary(): BoolExpr {
    const token = this.peek();
    if (!this.acceptKeyword('not')) return this.parsePrimary();
    return this.nested(token, () => ({ kind: 'not', operand: this.parseOr() }));
  }

  private parsePrimary(): BoolExpr {
    const token = this.peek();
    if (token.kind === 'punctuation' && token.punctuation === '(') {
      this.advance();
      return this.nested(token, () => {
        const inner = this.parseOr();
        this.expectPunctuation(')', "'and', 'or' or ')'");
        return inner;
      });
    }
    if (token.kind === 'identifier') {
      this.advance();
      if (this.endsCondition()) return { kind: 'boolField', field: token.name, position: token.position };
      return this.parseOperation({ kind: 'field', field: token.name, position: token.position });
    }
    if (token.kind === 'keyword') {
      switch (token.keyword) {
        case 'true':
        case 'false':
          this.advance();
          return { kind: 'constant', value: token.keyword === 'true' };
        case 'isempty': {
          this.advance();
          const { name, position } = this.parseSetArgument();
          return { kind: 'isEmpty', field: name, position };
        }
        case 'allof':
        case 'anyof': {
          this.advance();
          this.expectPunctuation('(', "'('");
          const { name, position } = this.expectIdentifier('a set field name');
          this.expectPunctuation(')', "')'");
          return this.parseOperation({ kind: token.keyword === 'allof' ? 'allOf' : 'anyOf', field: name, position });
        }
        case 'count': {
          this.advance();
          const { name, position } = this.parseSetArgument();
          return this.parseOperation({ kind: 'count', field: name, position });
        }
      }
    }
    throw this.unexpected(
      token,
      'a condition such as name = "x", a boolean field, true, false, not, isEmpty(…), anyOf(…), allOf(…), count(…) or (',
    );
  }

  /** Whether the next token can follow a complete condition, so that a preceding field name is a boolean field. */
  private endsCondition(): boolean {
    const token = this.peek();
    switch (token.kind) {
      case 'end':
        return true;
      case 'punctuation':
        return token.punctuation === ')';
      case 'keyword':
        return ['and', 'or', 'sort', 'skip', 'limit'].includes(token.keyword);
      default:
        return false;
    }
  }

  /** `( setExpr )` of `isEmpty` and `count`: a set field; sub-queries are rejected. */
  private parseSetArgument(): { name: string; position: number } {
    this.expectPunctuation('(', "'('");
    const token = this.peek();
    if (token.kind === 'keyword' && token.keyword === 'from') {
      throw new FilterError(this.text, token.position, 'sub-queries are not supported', 'a set field name');
    }
    const argument = this.expectIdentifier('a set field name');
    this.expectPunctuation(')', "')'");
    return argument;
  }

  private parseOperation(lhs: Operand): BoolExpr {
    const token = this.peek();
    if (token.kind === 'operator') {
      this.advance();
      if (token.operator === '=' || token.operator === '!=') {
        const value = this.expectLiteral(isAnyLiteral, `${ORDERED_VALUE}, true, false or null after '${token.text}'`);
        return { kind: 'equals', lhs, negated: token.operator === '!=', value };
      }
      const value = this.expectLiteral(isOrdered, `${ORDERED_VALUE} after '${token.text}'`);
      return { kind: 'compare', lhs, operator: token.operator, value };
    }
    const negated = this.acceptKeyword('not');
    const operator = this.peek();
    if (operator.kind === 'keyword') {
      switch (operator.keyword) {
        case 'contains': {
          this.advance();
          const value = this.expectLiteral(isContainsValue, "a string or a number after 'contains'");
          return { kind: 'contains', lhs, negated, caseInsensitive: false, value };
        }
        case 'icontains': {
          this.advance();
          const value = this.expectLiteral(isString, "a string after 'icontains'");
          return { kind: 'contains', lhs, negated, caseInsensitive: true, value };
        }
        case 'in':
          this.advance();
          return { kind: 'in', lhs, negated, values: this.parseList() };
        case 'between': {
          this.advance();
          const low = this.expectLiteral(isRangeBound, "a number or datetime(…) after 'between'");
          this.expectKeyword('and', `'and' after the lower bound of 'between'`);
          const high = this.expectLiteral(
            (literal): literal is NumberLiteral | DatetimeLiteral => literal.type === low.type,
            `${low.type === 'number' ? 'a number' : 'datetime(…)'} as the upper bound, like the lower bound`,
          );
          return { kind: 'between', lhs, negated, low, high };
        }
      }
    }
    throw this.unexpected(operator, negated ? "'contains', 'icontains', 'in' or 'between' after 'not'" : OPERATORS);
  }

  /** `[v1, v2, …]`: not empty, all of one type. */
  private parseList(): OrderedLiteral[] {
    this.expectPunctuation('[', "'[' to start a list of values");
    const first = this.expectLiteral(isOrdered, `${ORDERED_VALUE} (lists cannot be empty)`);
    const values = [first];
    while (this.acceptPunctuation(',')) {
      values.push(
        this.expectLiteral(
          (literal): literal is OrderedLiteral => literal.type === first.type,
          `${first.type === 'datetime' ? 'datetime(…)' : `a ${first.type}`}: all values of a list have the same type`,
        ),
      );
    }
    this.expectPunctuation(']', "',' or ']'");
    return values;
  }

  private parseSortBy(): SortField[] {
    this.expectKeyword('by', "'by' after 'sort'");
    return this.parseSortFields();
  }

  private parseSortFields(): SortField[] {
    const fields: SortField[] = [];
    do {
      const { name, position } = this.expectIdentifier('a field name to sort by');
      let direction: SortField['direction'] = 'asc';
      if (this.acceptKeyword('desc')) direction = 'desc';
      else this.acceptKeyword('asc');
      fields.push({ field: name, direction, position });
    } while (this.acceptPunctuation(','));
    return fields;
  }

  private parseLimit(): number | 'none' {
    return this.acceptKeyword('none') ? 'none' : this.parseRowCount('limit', ' or none');
  }

  private parseRowCount(clause: 'skip' | 'limit', alternative = ''): number {
    const token = this.peek();
    if (token.kind !== 'number' || token.text.startsWith('-') || !Number.isSafeInteger(token.value)) {
      throw this.unexpected(token, `a whole number of rows, 0 or more,${alternative} after '${clause}'`);
    }
    this.advance();
    return token.value;
  }

  private expectLiteral<T extends Literal>(accepts: (literal: Literal) => literal is T, expected: string): T {
    const token = this.peek();
    const literal = literalOf(token);
    if (literal === undefined || !accepts(literal)) throw this.unexpected(token, expected);
    this.advance();
    return literal;
  }

  private expectIdentifier(expected: string): { name: string; position: number } {
    const token = this.peek();
    if (token.kind !== 'identifier') {
      const hint =
        token.kind === 'keyword'
          ? ` ('${token.text}' is a keyword: quote it as '${token.text}' to use it as a field name)`
          : '';
      throw this.unexpected(token, `${expected}${hint}`);
    }
    this.advance();
    return { name: token.name, position: token.position };
  }

  private expectKeyword(keyword: Keyword, expected: string): void {
    if (!this.acceptKeyword(keyword)) throw this.unexpected(this.peek(), expected);
  }

  private expectPunctuation(punctuation: '(' | ')' | '[' | ']', expected: string): void {
    if (!this.acceptPunctuation(punctuation)) throw this.unexpected(this.peek(), expected);
  }

  private expectEnd(alternatives: readonly string[]): void {
    const token = this.peek();
    if (token.kind !== 'end') throw this.unexpected(token, oneOf([...alternatives, 'the end of the text']));
  }

  private acceptKeyword(keyword: Keyword): boolean {
    const token = this.peek();
    if (token.kind !== 'keyword' || token.keyword !== keyword) return false;
    this.advance();
    return true;
  }

  private acceptPunctuation(punctuation: '(' | ')' | '[' | ']' | ','): boolean {
    const token = this.peek();
    if (token.kind !== 'punctuation' || token.punctuation !== punctuation) return false;
    this.advance();
    return true;
  }

  /** Runs `parse` one nesting level deeper, refusing to go past {@link MAX_NESTING_DEPTH}. */
  private nested<T>(token: Token, parse: () => T): T {
    if (this.depth >= MAX_NESTING_DEPTH) {
      throw new FilterError(
        this.text,
        token.position,
        `'${token.text}' nests too deeply`,
        `at most ${MAX_NESTING_DEPTH} levels of parentheses and 'not'`,
      );
    }
    this.depth++;
    const result = parse();
    this.depth--;
    return result;
  }

  private peek(): Token {
    // The token list always ends with an `end` token, which is never consumed.
    return this.tokens[this.index]!;
  }

  private advance(): void {
    this.index++;
  }

  private unexpected(token: Token, expected: string): FilterError {
    const found = token.kind === 'end' ? 'end of text' : `'${truncate(token.text)}'`;
    return new FilterError(this.text, token.position, `unexpected ${found}`, expected);
  }
}

function isClauseKeyword(token: Token): boolean {
  return (
    token.kind === 'keyword' && (token.keyword === 'sort' || token.keyword === 'skip' || token.keyword === 'limit')
  );
}

function literalOf(token: Token): Literal | undefined {
  const { position } = token;
  switch (token.kind) {
    case 'string':
      return { type: 'string', value: token.value, position };
    case 'number':
      return { type: 'number', value: token.value, position };
    case 'datetime':
      return { type: 'datetime', value: token.value, instant: token.instant, position };
    case 'keyword':
      if (token.keyword === 'true' || token.keyword === 'false') {
        return { type: 'boolean', value: token.keyword === 'true', position };
      }
      return token.keyword === 'null' ? { type: 'null', position } : undefined;
    default:
      return undefined;
  }
}

function oneOf(options: readonly string[]): string {
  return options.length === 1 ? options[0]! : `${options.slice(0, -1).join(', ')} or ${options.at(-1)}`;
}
