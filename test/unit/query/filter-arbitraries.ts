import fc from 'fast-check';
import type {
  BoolExpr,
  BooleanLiteral,
  DatetimeLiteral,
  Literal,
  NullLiteral,
  NumberLiteral,
  Operand,
  OrderOperator,
  SortField,
  StringLiteral,
} from '#shared/query/filter-ast.ts';
import type { FilterableFields } from '#shared/query/filterable-fields.ts';
import { parseInstant } from '#shared/query/parse-instant.ts';

/** The fields the generated filters use, one of each type. */
export const FIELDS = {
  id: 'string',
  name: 'string',
  age: 'number',
  isAdmin: 'boolean',
  createdAt: 'datetime',
  roleAttributes: 'stringSet',
  tags: 'map',
} as const satisfies FilterableFields;

/** Field names by type; generators draw from these so that validation passes. */
export interface FieldNames {
  readonly string: fc.Arbitrary<string>;
  readonly number: fc.Arbitrary<string>;
  readonly boolean: fc.Arbitrary<string>;
  readonly datetime: fc.Arbitrary<string>;
  readonly stringSet: fc.Arbitrary<string>;
  readonly mapEntry: fc.Arbitrary<string>;
}

const MAP_KEYS = ['env', 'tier', 'flag', 'region'] as const;

/** The names of {@link FIELDS}. */
export const SCHEMA_NAMES: FieldNames = {
  string: fc.constantFrom('id', 'name'),
  number: fc.constant('age'),
  boolean: fc.constant('isAdmin'),
  datetime: fc.constant('createdAt'),
  stringSet: fc.constant('roleAttributes'),
  mapEntry: fc.constantFrom(...MAP_KEYS.map((key) => `tags.${key}`)),
};

/** Any field name the grammar allows, keywords in any case included (they are written quoted). */
export const identifier: fc.Arbitrary<string> = fc.oneof(
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,6}(\.[A-Za-z][A-Za-z0-9_-]{0,4}){0,2}$/),
  fc.constantFrom('sort', 'Limit', 'AND', 'none', 'isEmpty', 'datetime', 'DateTime', 'true', 'notes', 'tags.limit'),
);

/** Arbitrary names for every type, for round trips that do not validate. */
export const ANY_NAMES: FieldNames = {
  string: identifier,
  number: identifier,
  boolean: identifier,
  datetime: identifier,
  stringSet: identifier,
  mapEntry: identifier,
};

/** Small pools shared by filters and records, so generated filters often match. */
export const STRING_POOL = ['', 'a', 'ab', 'B', 'web', 'Web', 'prod', 'é', '"q"'] as const;
export const NUMBER_POOL = [0, -0, 1, 2, 2.5, -1, 42] as const;
export const DATETIME_POOL = [
  '2024-03-01T10:00:00Z',
  '2024-03-01T12:00:00+02:00',
  '2024-03-01T10:00:00.000001Z',
  '1999-12-31T23:59:59.999-05:30',
] as const;

const ESCAPABLE_CONTROL = new Set(['\f', '\n', '\r', '\t']);

/** A string ZitiQL can write: no control characters other than \f, \n, \r and \t. */
export const stringValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...STRING_POOL),
  fc
    .string({ unit: 'binary' })
    .map((text) => [...text].map((char) => (char < ' ' && !ESCAPABLE_CONTROL.has(char) ? '?' : char)).join('')),
  fc.string({ unit: fc.constantFrom('"', '\\', '\f', '\n', '\r', '\t', 'x', '\ud800') }),
);

export const numberValue: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(...NUMBER_POOL),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const pad = (value: number, length = 2): string => String(value).padStart(length, '0');

/** RFC 3339 text, with and without fractions and offsets. */
export const datetimeText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...DATETIME_POOL),
  fc
    .record({
      year: fc.integer({ min: 0, max: 9999 }),
      month: fc.integer({ min: 1, max: 12 }),
      day: fc.integer({ min: 1, max: 28 }),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      second: fc.integer({ min: 0, max: 59 }),
      fraction: fc.option(fc.stringMatching(/^[0-9]{1,9}$/), { nil: undefined }),
      zone: fc.oneof(
        fc.constantFrom('Z', 'z'),
        fc
          .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
          .map(([sign, hours, minutes]) => `${sign}${pad(hours)}:${pad(minutes)}`),
      ),
    })
    .map(
      ({ year, month, day, hour, minute, second, fraction, zone }) =>
        `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}` +
        `${fraction === undefined ? '' : `.${fraction}`}${zone}`,
    ),
);

export const stringLiteral: fc.Arbitrary<StringLiteral> = stringValue.map((value) => ({
  type: 'string',
  value,
  position: 0,
}));
export const numberLiteral: fc.Arbitrary<NumberLiteral> = numberValue.map((value) => ({
  type: 'number',
  value,
  position: 0,
}));
export const datetimeLiteral: fc.Arbitrary<DatetimeLiteral> = datetimeText.map((value) => ({
  type: 'datetime',
  value,
  instant: parseInstant(value) ?? Number.NaN,
  position: 0,
}));
const booleanLiteral: fc.Arbitrary<BooleanLiteral> = fc
  .boolean()
  .map((value) => ({ type: 'boolean', value, position: 0 }));
const nullLiteral: fc.Arbitrary<NullLiteral> = fc.constant({ type: 'null', position: 0 });

const orderOperator: fc.Arbitrary<OrderOperator> = fc.constantFrom('<', '<=', '>', '>=');

function operand(kind: Operand['kind'], names: fc.Arbitrary<string>): fc.Arbitrary<Operand> {
  return names.map((field) => ({ kind, field, position: 0 }));
}

function equals(lhs: fc.Arbitrary<Operand>, value: fc.Arbitrary<Literal>): fc.Arbitrary<BoolExpr> {
  return fc.record({ lhs, negated: fc.boolean(), value }).map((parts) => ({ kind: 'equals', ...parts }));
}

function compare(
  lhs: fc.Arbitrary<Operand>,
  value: fc.Arbitrary<StringLiteral | NumberLiteral | DatetimeLiteral>,
): fc.Arbitrary<BoolExpr> {
  return fc.record({ lhs, operator: orderOperator, value }).map((parts) => ({ kind: 'compare', ...parts }));
}

function contains(lhs: fc.Arbitrary<Operand>): fc.Arbitrary<BoolExpr> {
  return fc.oneof(
    fc
      .record({ lhs, negated: fc.boolean(), value: fc.oneof(stringLiteral, numberLiteral) })
      .map((parts): BoolExpr => ({ kind: 'contains', caseInsensitive: false, ...parts })),
    fc
      .record({ lhs, negated: fc.boolean(), value: stringLiteral })
      .map((parts): BoolExpr => ({ kind: 'contains', caseInsensitive: true, ...parts })),
  );
}

function inList(
  lhs: fc.Arbitrary<Operand>,
  value: fc.Arbitrary<StringLiteral | NumberLiteral | DatetimeLiteral>,
): fc.Arbitrary<BoolExpr> {
  return fc
    .record({ lhs, negated: fc.boolean(), values: fc.array(value, { minLength: 1, maxLength: 4 }) })
    .map((parts) => ({ kind: 'in', ...parts }));
}

function between(
  lhs: fc.Arbitrary<Operand>,
  bound: fc.Arbitrary<NumberLiteral | DatetimeLiteral>,
): fc.Arbitrary<BoolExpr> {
  return fc
    .record({ lhs, negated: fc.boolean(), low: bound, high: bound })
    .map((parts) => ({ kind: 'between', ...parts }));
}

function stringConditions(lhs: fc.Arbitrary<Operand>, nullable: boolean): fc.Arbitrary<BoolExpr>[] {
  return [
    equals(lhs, nullable ? fc.oneof(stringLiteral, nullLiteral) : stringLiteral),
    compare(lhs, stringLiteral),
    contains(lhs),
    inList(lhs, stringLiteral),
  ];
}

function numberConditions(lhs: fc.Arbitrary<Operand>, nullable: boolean): fc.Arbitrary<BoolExpr>[] {
  return [
    equals(lhs, nullable ? fc.oneof(numberLiteral, nullLiteral) : numberLiteral),
    compare(lhs, numberLiteral),
    inList(lhs, numberLiteral),
    between(lhs, numberLiteral),
  ];
}

/** Conditions that validate against the types the names stand for. */
export function conditionArbitrary(names: FieldNames): fc.Arbitrary<BoolExpr> {
  const datetimeField = operand('field', names.datetime);
  const mapEntry = operand('field', names.mapEntry);
  const setOperand = fc.oneof(operand('anyOf', names.stringSet), operand('allOf', names.stringSet));
  return fc.oneof(
    fc.boolean().map((value): BoolExpr => ({ kind: 'constant', value })),
    ...stringConditions(operand('field', names.string), true),
    ...numberConditions(operand('field', names.number), true),
    equals(operand('field', names.boolean), fc.oneof(booleanLiteral, nullLiteral)),
    names.boolean.map((field): BoolExpr => ({ kind: 'boolField', field, position: 0 })),
    equals(datetimeField, fc.oneof(datetimeLiteral, nullLiteral)),
    compare(datetimeField, datetimeLiteral),
    inList(datetimeField, datetimeLiteral),
    between(datetimeField, datetimeLiteral),
    ...stringConditions(setOperand, false),
    ...numberConditions(operand('count', names.stringSet), false),
    names.stringSet.map((field): BoolExpr => ({ kind: 'isEmpty', field, position: 0 })),
    equals(mapEntry, fc.oneof(stringLiteral, numberLiteral, booleanLiteral, nullLiteral)),
    compare(mapEntry, fc.oneof(stringLiteral, numberLiteral)),
    contains(mapEntry),
    inList(mapEntry, stringLiteral),
    inList(mapEntry, numberLiteral),
    between(mapEntry, numberLiteral),
    names.mapEntry.map((field): BoolExpr => ({ kind: 'boolField', field, position: 0 })),
  );
}

/** Conditions combined with and, or and not, up to `depth` levels. */
export function boolExprArbitrary(names: FieldNames, depth = 4): fc.Arbitrary<BoolExpr> {
  const condition = conditionArbitrary(names);
  const expr: fc.Memo<BoolExpr> = fc.memo((remaining: number): fc.Arbitrary<BoolExpr> => {
    if (remaining <= 1) return condition;
    const operands: fc.Arbitrary<BoolExpr[]> = fc.array(expr(remaining - 1), { minLength: 2, maxLength: 3 });
    return fc.oneof(
      { arbitrary: condition, weight: 3 },
      { arbitrary: operands.map((items): BoolExpr => ({ kind: 'and', operands: items })), weight: 1 },
      { arbitrary: operands.map((items): BoolExpr => ({ kind: 'or', operands: items })), weight: 1 },
      { arbitrary: expr(remaining - 1).map((inner): BoolExpr => ({ kind: 'not', operand: inner })), weight: 1 },
    );
  });
  return expr(depth);
}

export function sortArbitrary(names: fc.Arbitrary<string>): fc.Arbitrary<SortField[]> {
  return fc.array(fc.record({ field: names, direction: fc.constantFrom('asc', 'desc'), position: fc.constant(0) }), {
    maxLength: 3,
  });
}

/** Records of the {@link FIELDS} shape with untidy values: missing, null, wrong types, pooled values. */
export const recordArbitrary: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    id: fc.oneof(fc.constantFrom('a', 'b', 'c'), fc.string()),
    name: fc.oneof(fc.constantFrom(...STRING_POOL), fc.constant(null), fc.string(), fc.anything()),
    age: fc.oneof(fc.constantFrom(...NUMBER_POOL), fc.constant(null), fc.double(), fc.anything()),
    isAdmin: fc.oneof(fc.boolean(), fc.constant(null), fc.anything()),
    createdAt: fc.oneof(
      fc.constantFrom(...DATETIME_POOL),
      datetimeText,
      fc.date(),
      fc.constant(null),
      fc.string(),
      fc.anything(),
    ),
    roleAttributes: fc.oneof(
      fc.array(fc.constantFrom(...STRING_POOL), { maxLength: 4 }),
      fc.constant(null),
      fc.array(fc.anything(), { maxLength: 3 }),
      fc.anything(),
    ),
    tags: fc.oneof(
      fc.dictionary(
        fc.constantFrom(...MAP_KEYS),
        fc.oneof(fc.constantFrom(...STRING_POOL), fc.constantFrom(...NUMBER_POOL), fc.boolean(), fc.constant(null)),
      ),
      fc.anything(),
    ),
  },
  { requiredKeys: [] },
);

/** A deep copy without `position` keys, to compare trees parsed from different texts. */
export function withoutPositions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutPositions);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'position')
      .map(([key, item]) => [key, withoutPositions(item)]),
  );
}
