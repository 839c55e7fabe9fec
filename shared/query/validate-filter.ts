import type { BoolExpr, Literal, Operand, ParsedFilter, SortField } from './filter-ast.ts';
import { FilterError } from './filter-error.ts';
import { type FieldType, type FilterableFields, resolveFieldType } from './filterable-fields.ts';
import { formatLiteral } from './format-filter.ts';
import { truncate } from './tokenize-filter.ts';

/** What a literal compared with an operand must be; `scalar` for map entries, which take any scalar. */
type ValueType = 'string' | 'number' | 'boolean' | 'datetime' | 'scalar';

const SORTABLE: ReadonlySet<FieldType | 'mapEntry' | undefined> = new Set(['string', 'number', 'boolean', 'datetime']);

const VALUE_EXAMPLES: Readonly<Record<ValueType, string>> = {
  string: 'a string such as "x"',
  number: 'a number',
  boolean: 'true or false',
  datetime: 'datetime(…) such as datetime(2024-01-31T12:00:00Z)',
  scalar: 'a string, a number, true or false',
};

/**
 * Checks a parsed filter against the fields a list operation offers: every field must exist, every comparison must
 * suit the field's type, set fields (`stringSet`) may only be used through `anyOf`, `allOf`, `count` and `isEmpty`,
 * map fields (`map`) only through their keys (`tags.env`), and sort fields must be plain scalar fields.
 *
 * `= null` and `!= null` are allowed on every plain field and map key.
 *
 * @throws FilterError pointing at the offending field or value in `parsed.text`.
 */
export function validateFilter(parsed: ParsedFilter, fields: FilterableFields): void {
  if (parsed.where !== undefined) new Validator(parsed.text, fields).check(parsed.where);
  validateSort(parsed.sort, fields, parsed.text);
}

/**
 * Checks a sort order, such as one from `parseSort`, against the fields a list operation offers: every field must
 * exist and be a plain string, number, boolean or datetime field.
 *
 * @param text - the text the sort order was parsed from, for the error's line and column.
 * @throws FilterError pointing at the offending field.
 */
export function validateSort(sort: readonly SortField[], fields: FilterableFields, text: string): void {
  for (const { field, position = 0 } of sort) {
    const type = resolveFieldType(fields, field);
    if (type === undefined || !SORTABLE.has(type)) {
      const sortable = Object.keys(fields)
        .filter((name) => SORTABLE.has(resolveFieldType(fields, name)))
        .sort();
      const problem =
        type === undefined ? `unknown field '${field}'` : `cannot sort by '${field}', ${describeType(type)}`;
      throw new FilterError(text, position, problem, `a field to sort by: ${sortable.join(', ')}`);
    }
  }
}

class Validator {
  private readonly text: string;
  private readonly fields: FilterableFields;

  constructor(text: string, fields: FilterableFields) {
    this.text = text;
    this.fields = fields;
  }

  check(expr: BoolExpr): void {
    switch (expr.kind) {
      case 'and':
      case 'or':
        for (const operand of expr.operands) this.check(operand);
        return;
      case 'not':
        this.check(expr.operand);
        return;
      case 'constant':
        return;
      case 'boolField': {
        const type = this.typeOf(expr.field, expr.position);
        if (type !== 'boolean' && type !== 'mapEntry') {
          this.fail(
            expr.position,
            `'${expr.field}' is ${describeType(type)}, not a boolean`,
            'a comparison with a value',
          );
        }
        return;
      }
      case 'isEmpty':
        this.setField('isEmpty', expr.field, expr.position);
        return;
      case 'equals': {
        const valueType = this.valueTypeOf(expr.lhs);
        if (expr.value.type === 'null' && expr.lhs.kind !== 'field') {
          this.fail(expr.value.position, `cannot compare ${expr.lhs.kind}(…) with null`, VALUE_EXAMPLES[valueType]);
        }
        const nullable = expr.lhs.kind === 'field' ? ' or null' : '';
        this.checkLiteral(expr.lhs, valueType, expr.value, `${VALUE_EXAMPLES[valueType]}${nullable}`);
        return;
      }
      case 'compare': {
        const valueType = this.orderedValueTypeOf(expr.lhs, expr.operator);
        this.checkLiteral(expr.lhs, valueType, expr.value, VALUE_EXAMPLES[valueType]);
        return;
      }
      case 'contains': {
        const valueType = this.valueTypeOf(expr.lhs);
        if (valueType !== 'string' && valueType !== 'scalar') {
          const operator = expr.caseInsensitive ? 'icontains' : 'contains';
          this.fail(
            expr.lhs.position,
            `cannot use '${operator}' on ${describeOperand(expr.lhs, valueType)}`,
            'strings',
          );
        }
        return;
      }
      case 'in': {
        const valueType = this.orderedValueTypeOf(expr.lhs, 'in');
        for (const value of expr.values) {
          this.checkLiteral(expr.lhs, valueType, value, `a list of ${plural(valueType)}`);
        }
        return;
      }
      case 'between': {
        const valueType = this.orderedValueTypeOf(expr.lhs, 'between');
        if (valueType === 'string') {
          const problem = `cannot use 'between' on ${describeOperand(expr.lhs, valueType)}`;
          this.fail(expr.lhs.position, problem, 'numbers or date-times');
        }
        this.checkLiteral(expr.lhs, valueType, expr.low, VALUE_EXAMPLES[valueType]);
        this.checkLiteral(expr.lhs, valueType, expr.high, VALUE_EXAMPLES[valueType]);
        return;
      }
    }
  }

  /** The type of value the operand yields; fails for set and map fields used as plain fields and the reverse. */
  private valueTypeOf(lhs: Operand): ValueType {
    if (lhs.kind !== 'field') {
      this.setField(`${lhs.kind}(…)`, lhs.field, lhs.position);
      return lhs.kind === 'count' ? 'number' : 'string';
    }
    const type = this.typeOf(lhs.field, lhs.position);
    switch (type) {
      case 'stringSet':
        return this.fail(
          lhs.position,
          `'${lhs.field}' is a set of strings`,
          `anyOf(${lhs.field}), allOf(${lhs.field}), count(${lhs.field}) or isEmpty(${lhs.field})`,
        );
      case 'map':
        return this.fail(lhs.position, `'${lhs.field}' is a map`, `one of its keys, such as ${lhs.field}.<key>`);
      case 'mapEntry':
        return 'scalar';
      default:
        return type;
    }
  }

  /** Like {@link valueTypeOf}, for operators that need an order, which booleans do not have. */
  private orderedValueTypeOf(lhs: Operand, operator: string): ValueType {
    const valueType = this.valueTypeOf(lhs);
    if (valueType === 'boolean') {
      this.fail(lhs.position, `cannot use '${operator}' on ${describeOperand(lhs, valueType)}`, "'=' or '!='");
    }
    return valueType;
  }

  private checkLiteral(lhs: Operand, valueType: ValueType, literal: Literal, expected: string): void {
    const fits =
      literal.type === valueType ||
      (literal.type === 'null' && lhs.kind === 'field') ||
      (valueType === 'scalar' && literal.type !== 'datetime');
    if (!fits) {
      const problem = `cannot compare ${describeOperand(lhs, valueType)} with ${truncate(formatLiteral(literal))}`;
      this.fail(literal.position, problem, expected);
    }
  }

  private setField(use: string, field: string, position: number): void {
    const type = this.typeOf(field, position);
    if (type !== 'stringSet') this.fail(position, `${use} needs a set field, but '${field}' is ${describeType(type)}`);
  }

  private typeOf(field: string, position: number): FieldType | 'mapEntry' {
    const type = resolveFieldType(this.fields, field);
    if (type !== undefined) return type;
    const known = Object.entries(this.fields)
      .map(([name, fieldType]) => (fieldType === 'map' ? `${name}.<key>` : name))
      .sort();
    return this.fail(position, `unknown field '${field}'`, `one of ${known.join(', ')}`);
  }

  private fail(position: number, problem: string, expected?: string): never {
    throw new FilterError(this.text, position, problem, expected);
  }
}

function describeType(type: FieldType | 'mapEntry'): string {
  switch (type) {
    case 'stringSet':
      return 'a set of strings';
    case 'map':
      return 'a map';
    case 'mapEntry':
      return 'a map entry';
    default:
      return `a ${type}`;
  }
}

function describeOperand(lhs: Operand, valueType: ValueType): string {
  switch (lhs.kind) {
    case 'field':
      return `${lhs.field} (${valueType === 'scalar' ? 'a map entry' : `a ${valueType}`})`;
    case 'count':
      return `count(${lhs.field}) (a number)`;
    default:
      return `${lhs.kind}(${lhs.field}) (strings)`;
  }
}

function plural(valueType: ValueType): string {
  return valueType === 'scalar' ? 'strings or numbers' : `${valueType}s`;
}
