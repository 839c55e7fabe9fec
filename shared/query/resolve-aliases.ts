import type { BoolExpr, SortField } from './filter-ast.ts';
import { canonicalField, type FilterableFields } from './filterable-fields.ts';

/**
 * A validated filter condition with every aliased field name (`FieldAlias`) replaced by the field it names, so that
 * evaluation, sorting and key pinning read the stored field. Unchanged when `fields` declares no alias.
 */
export function resolveAliases(expr: BoolExpr, fields: FilterableFields): BoolExpr {
  switch (expr.kind) {
    case 'and':
    case 'or':
      return { ...expr, operands: expr.operands.map((operand) => resolveAliases(operand, fields)) };
    case 'not':
      return { ...expr, operand: resolveAliases(expr.operand, fields) };
    case 'constant':
      return expr;
    case 'boolField':
    case 'isEmpty':
      return { ...expr, field: canonicalField(fields, expr.field) };
    default:
      return { ...expr, lhs: { ...expr.lhs, field: canonicalField(fields, expr.lhs.field) } };
  }
}

/** A validated sort order with aliased field names replaced by the fields they name. */
export function resolveSortAliases(sort: readonly SortField[], fields: FilterableFields): SortField[] {
  return sort.map((key) => ({ ...key, field: canonicalField(fields, key.field) }));
}
