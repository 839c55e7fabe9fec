import type {
  BetweenExpr,
  BoolExpr,
  CompareExpr,
  ContainsExpr,
  EqualsExpr,
  InExpr,
  Literal,
  Operand,
  OrderedLiteral,
  OrderOperator,
} from './filter-ast.ts';
import { instantOf } from './instant-of.ts';
import { readField } from './read-field.ts';

type Operation = EqualsExpr | CompareExpr | ContainsExpr | InExpr | BetweenExpr;
type Test = (value: unknown) => boolean;

const ORDER: Readonly<Record<OrderOperator, (difference: number) => boolean>> = {
  '<': (difference) => difference < 0,
  '<=': (difference) => difference <= 0,
  '>': (difference) => difference > 0,
  '>=': (difference) => difference >= 0,
};

/**
 * Whether a record satisfies a filter condition; `undefined` matches every record. Never throws, whatever the record
 * holds.
 *
 * A value is compared as the type of the literal it meets: strings by UTF-16 code units, numbers numerically,
 * date-times (a `Date` or an RFC 3339 string) as instants. A value that is missing, `null` or of another type
 * satisfies no comparison, so it matches the negated forms (`!=`, `not in`, `not contains`, `not icontains`,
 * `not between`), which are exact negations. A set field (array) matches `anyOf(x) op v` when some element does
 * and `allOf(x) op v` when it has elements and all of them do; a missing set is empty and a lone value is a set of
 * one.
 */
export function matchesFilter(expr: BoolExpr | undefined, record: Readonly<Record<string, unknown>>): boolean {
  return expr === undefined || evaluate(expr, record);
}

function evaluate(expr: BoolExpr, record: Readonly<Record<string, unknown>>): boolean {
  switch (expr.kind) {
    case 'and':
      return expr.operands.every((operand) => evaluate(operand, record));
    case 'or':
      return expr.operands.some((operand) => evaluate(operand, record));
    case 'not':
      return !evaluate(expr.operand, record);
    case 'constant':
      return expr.value;
    case 'boolField':
      return readField(record, expr.field) === true;
    case 'isEmpty':
      return elementsOf(readField(record, expr.field)).length === 0;
    default:
      return applyToOperand(expr.lhs, record, testFor(expr));
  }
}

function applyToOperand(lhs: Operand, record: Readonly<Record<string, unknown>>, test: Test): boolean {
  const value = readField(record, lhs.field);
  switch (lhs.kind) {
    case 'field':
      return test(value);
    case 'anyOf':
      return elementsOf(value).some(test);
    case 'allOf': {
      const elements = elementsOf(value);
      return elements.length > 0 && elements.every(test);
    }
    case 'count':
      return test(elementsOf(value).length);
  }
}

function elementsOf(value: unknown): readonly unknown[] {
  if (Array.isArray(value)) return value;
  return value === undefined || value === null ? [] : [value];
}

function testFor(expr: Operation): Test {
  switch (expr.kind) {
    case 'equals':
      return negatedIf(expr.negated, (value) => equalsLiteral(value, expr.value));
    case 'compare': {
      const target = keyOfLiteral(expr.value);
      const holds = ORDER[expr.operator];
      return (value) => {
        const key = keyOf(value, expr.value.type);
        return key !== undefined && holds(compareKeys(key, target));
      };
    }
    case 'contains': {
      const needle = String(expr.value.value);
      if (expr.caseInsensitive) {
        const lowerNeedle = needle.toLowerCase();
        return negatedIf(
          expr.negated,
          (value) => typeof value === 'string' && value.toLowerCase().includes(lowerNeedle),
        );
      }
      return negatedIf(expr.negated, (value) => typeof value === 'string' && value.includes(needle));
    }
    case 'in':
      return negatedIf(expr.negated, (value) => expr.values.some((literal) => equalsLiteral(value, literal)));
    case 'between': {
      const low = keyOfLiteral(expr.low);
      const high = keyOfLiteral(expr.high);
      return negatedIf(expr.negated, (value) => {
        const key = keyOf(value, expr.low.type);
        return key !== undefined && key >= low && key < high;
      });
    }
  }
}

function negatedIf(negated: boolean, test: Test): Test {
  return negated ? (value) => !test(value) : test;
}

function equalsLiteral(value: unknown, literal: Literal): boolean {
  switch (literal.type) {
    case 'null':
      return value === undefined || value === null;
    case 'boolean':
      return value === literal.value;
    default:
      return keyOf(value, literal.type) === keyOfLiteral(literal);
  }
}

/** A record value as a comparable key of the literal's type, or `undefined` when it is not of that type. */
function keyOf(value: unknown, type: OrderedLiteral['type']): string | number | undefined {
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : undefined;
    case 'number':
      return typeof value === 'number' && !Number.isNaN(value) ? value : undefined;
    case 'datetime':
      return instantOf(value);
  }
}

function keyOfLiteral(literal: OrderedLiteral): string | number {
  return literal.type === 'datetime' ? literal.instant : literal.value;
}

function compareKeys(a: string | number, b: string | number): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}
