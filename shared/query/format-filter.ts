import type { BoolExpr, Literal, Operand, ParsedFilter, SortField } from './filter-ast.ts';
import { isKeyword } from './tokenize-filter.ts';

const STRING_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/**
 * Writes a filter back as ZitiQL text that `parseFilter` reads as the same tree: keywords lower-case, parentheses
 * wherever nesting would otherwise be lost, field names that are keywords in single quotes.
 *
 * @throws RangeError for a string holding a control character other than `\f`, `\n`, `\r` or `\t`, which ZitiQL
 *   cannot express.
 */
export function formatFilter(filter: Omit<ParsedFilter, 'text'>): string {
  const parts: string[] = [];
  if (filter.where !== undefined) parts.push(formatBoolExpr(filter.where));
  if (filter.sort.length > 0) parts.push(`sort by ${formatSort(filter.sort)}`);
  if (filter.skip !== undefined) parts.push(`skip ${filter.skip}`);
  if (filter.limit !== undefined) parts.push(`limit ${filter.limit}`);
  return parts.join(' ');
}

/** Writes a sort order as `parseSort` reads it, e.g. `name desc, createdAt asc`. */
export function formatSort(sort: readonly SortField[]): string {
  return sort.map(({ field, direction }) => `${formatField(field)} ${direction}`).join(', ');
}

/** Writes one condition; see {@link formatFilter}. */
export function formatBoolExpr(expr: BoolExpr): string {
  switch (expr.kind) {
    case 'and':
      // `not` reaches to the end of the condition, so it is bracketed wherever something could follow it.
      return expr.operands.map((operand) => bracketIf(operand, ['and', 'or', 'not'])).join(' and ');
    case 'or':
      return expr.operands.map((operand) => bracketIf(operand, ['or', 'not'])).join(' or ');
    case 'not':
      return `not ${bracketIf(expr.operand, ['and', 'or'])}`;
    case 'constant':
      return String(expr.value);
    case 'boolField':
      return formatField(expr.field);
    case 'isEmpty':
      return `isEmpty(${formatField(expr.field)})`;
    case 'equals':
      return `${formatOperand(expr.lhs)} ${expr.negated ? '!=' : '='} ${formatLiteral(expr.value)}`;
    case 'compare':
      return `${formatOperand(expr.lhs)} ${expr.operator} ${formatLiteral(expr.value)}`;
    case 'contains':
      return `${formatOperand(expr.lhs)} ${negation(expr.negated)}${expr.caseInsensitive ? 'icontains' : 'contains'} ${formatLiteral(expr.value)}`;
    case 'in':
      return `${formatOperand(expr.lhs)} ${negation(expr.negated)}in [${expr.values.map(formatLiteral).join(', ')}]`;
    case 'between':
      return `${formatOperand(expr.lhs)} ${negation(expr.negated)}between ${formatLiteral(expr.low)} and ${formatLiteral(expr.high)}`;
  }
}

/** Writes a literal as it would appear in a filter, e.g. `"a\"b"`, `-0`, `datetime(2024-01-31T12:00:00Z)`. */
export function formatLiteral(literal: Literal): string {
  switch (literal.type) {
    case 'string':
      return formatString(literal.value);
    case 'number':
      return Object.is(literal.value, -0) ? '-0' : String(literal.value);
    case 'datetime':
      return `datetime(${literal.value})`;
    case 'boolean':
      return String(literal.value);
    case 'null':
      return 'null';
  }
}

function formatString(value: string): string {
  let text = '"';
  for (const char of value) text += char < ' ' || char === '"' || char === '\\' ? escapeCharacter(char) : char;
  return `${text}"`;
}

function escapeCharacter(char: string): string {
  const escaped = STRING_ESCAPES[char];
  if (escaped === undefined) {
    const code = char.charCodeAt(0).toString(16).padStart(4, '0');
    throw new RangeError(`a ZitiQL string cannot hold the control character U+${code.toUpperCase()}`);
  }
  return escaped;
}

function formatOperand(operand: Operand): string {
  const field = formatField(operand.field);
  return operand.kind === 'field' ? field : `${operand.kind}(${field})`;
}

function formatField(name: string): string {
  return isKeyword(name) ? `'${name}'` : name;
}

function negation(negated: boolean): string {
  return negated ? 'not ' : '';
}

function bracketIf(expr: BoolExpr, kinds: readonly BoolExpr['kind'][]): string {
  const text = formatBoolExpr(expr);
  return kinds.includes(expr.kind) ? `(${text})` : text;
}
