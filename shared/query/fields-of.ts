import type { BoolExpr, SortField } from './filter-ast.ts';

/**
 * The top-level document fields a filter condition and a sort order read (`tags.env` reads `tags`): what a list must
 * load of each record to evaluate them, and nothing more.
 */
export function fieldsOf(where: BoolExpr | undefined, sort: readonly SortField[] = []): Set<string> {
  const fields = new Set<string>(sort.map((key) => topLevel(key.field)));
  const visit = (expr: BoolExpr): void => {
    switch (expr.kind) {
      case 'and':
      case 'or':
        for (const operand of expr.operands) visit(operand);
        return;
      case 'not':
        visit(expr.operand);
        return;
      case 'constant':
        return;
      case 'boolField':
      case 'isEmpty':
        fields.add(topLevel(expr.field));
        return;
      default:
        fields.add(topLevel(expr.lhs.field));
    }
  };
  if (where) visit(where);
  return fields;
}

function topLevel(path: string): string {
  return path.split('.')[0]!;
}
