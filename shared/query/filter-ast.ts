/**
 * The syntax tree of a parsed ZitiQL filter. Nodes are plain immutable data. `position` fields are 0-based offsets of
 * the symbol in the filter text, so validation can point at the offending symbol.
 */

/** A double-quoted string, unescaped. */
export interface StringLiteral {
  readonly type: 'string';
  readonly value: string;
  readonly position: number;
}

/** A finite number. */
export interface NumberLiteral {
  readonly type: 'number';
  readonly value: number;
  readonly position: number;
}

/** A `datetime(…)` literal. */
export interface DatetimeLiteral {
  readonly type: 'datetime';
  /** The RFC 3339 text between the parentheses, as written. */
  readonly value: string;
  /** Milliseconds since the Unix epoch; fractions of a millisecond are kept to within a microsecond. */
  readonly instant: number;
  readonly position: number;
}

/** `true` or `false`. */
export interface BooleanLiteral {
  readonly type: 'boolean';
  readonly value: boolean;
  readonly position: number;
}

/** `null`: equal to a missing or null value. */
export interface NullLiteral {
  readonly type: 'null';
  readonly position: number;
}

/** The literals that have an order, so can be used with `<`, `in` and friends. */
export type OrderedLiteral = StringLiteral | NumberLiteral | DatetimeLiteral;

/** Any value a filter can compare with. */
export type Literal = OrderedLiteral | BooleanLiteral | NullLiteral;

/**
 * The left-hand side of an operation.
 * - `field`: the field's value.
 * - `anyOf` / `allOf`: some / every element of a set field (never true for an empty set).
 * - `count`: the number of elements of a set field.
 */
export interface Operand {
  readonly kind: 'field' | 'anyOf' | 'allOf' | 'count';
  /** Dotted path, e.g. `name` or `tags.env`. */
  readonly field: string;
  /** Offset of the field name. */
  readonly position: number;
}

/** `lhs = value`, or `lhs != value` when negated. */
export interface EqualsExpr {
  readonly kind: 'equals';
  readonly lhs: Operand;
  readonly negated: boolean;
  readonly value: Literal;
}

/** The operators that compare by order. */
export type OrderOperator = '<' | '<=' | '>' | '>=';

/** `lhs < value` and the like. */
export interface CompareExpr {
  readonly kind: 'compare';
  readonly lhs: Operand;
  readonly operator: OrderOperator;
  readonly value: OrderedLiteral;
}

/** `lhs [not] contains value` or, when case-insensitive, `lhs [not] icontains value`. */
export interface ContainsExpr {
  readonly kind: 'contains';
  readonly lhs: Operand;
  readonly negated: boolean;
  readonly caseInsensitive: boolean;
  /** A number matches its decimal text as a substring. */
  readonly value: StringLiteral | NumberLiteral;
}

/** `lhs [not] in [v1, v2, …]`. */
export interface InExpr {
  readonly kind: 'in';
  readonly lhs: Operand;
  readonly negated: boolean;
  /** Never empty; all values have the same type. */
  readonly values: readonly OrderedLiteral[];
}

/** `lhs [not] between low and high`: true when `low <= lhs < high`, as in the reference controller. */
export interface BetweenExpr {
  readonly kind: 'between';
  readonly lhs: Operand;
  readonly negated: boolean;
  readonly low: NumberLiteral | DatetimeLiteral;
  /** Of the same type as `low`. */
  readonly high: NumberLiteral | DatetimeLiteral;
}

/** `a and b and …`: at least two operands. */
export interface AndExpr {
  readonly kind: 'and';
  readonly operands: readonly BoolExpr[];
}

/** `a or b or …`: at least two operands. */
export interface OrExpr {
  readonly kind: 'or';
  readonly operands: readonly BoolExpr[];
}

/** `not operand`. */
export interface NotExpr {
  readonly kind: 'not';
  readonly operand: BoolExpr;
}

/** `true` or `false`. */
export interface ConstantExpr {
  readonly kind: 'constant';
  readonly value: boolean;
}

/** A bare boolean field, short for `field = true`. */
export interface BoolFieldExpr {
  readonly kind: 'boolField';
  readonly field: string;
  readonly position: number;
}

/** `isEmpty(field)`: the set field is missing or has no elements. */
export interface IsEmptyExpr {
  readonly kind: 'isEmpty';
  readonly field: string;
  readonly position: number;
}

/** Any boolean expression. */
export type BoolExpr =
  | AndExpr
  | OrExpr
  | NotExpr
  | ConstantExpr
  | BoolFieldExpr
  | IsEmptyExpr
  | EqualsExpr
  | CompareExpr
  | ContainsExpr
  | InExpr
  | BetweenExpr;

/** One key of a sort order. */
export interface SortField {
  /** Dotted path, e.g. `name`. */
  readonly field: string;
  readonly direction: 'asc' | 'desc';
  /** Offset of the field name in the parsed text; absent for sort orders built in code. */
  readonly position?: number;
}

/** A whole filter: `[where] [sort by …] [skip n] [limit n|none]`. */
export interface ParsedFilter {
  /** The text that was parsed; validation errors point into it. */
  readonly text: string;
  /** Absent when the filter has no condition (matches everything). */
  readonly where?: BoolExpr;
  /** Empty when the filter has no `sort by`. */
  readonly sort: SortField[];
  readonly skip?: number;
  /** `'none'` for `limit none`: no limit. */
  readonly limit?: number | 'none';
}
