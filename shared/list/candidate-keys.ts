import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import type { BoolExpr } from '../query/filter-ast.ts';

/** Values a filter pins a key field to: `id` or a unique field, each value answerable with one read. */
export interface CandidateKeys {
  readonly field: string;
  readonly values: readonly string[];
}

/** At most this many pinned values are read one by one; more fall back to reading the type. */
const MAX_CANDIDATES = 100;

/**
 * The values a filter pins `id` or a unique field to, when every match must have one of them: `name = "x"`,
 * `id in ["a", "b"]`, or such a condition as one operand of an `and`. Undefined when the filter pins nothing, so
 * the list must read the whole type.
 */
export function candidateKeys<D extends BaseDocument>(
  def: EntityDefinition<D>,
  where: BoolExpr | undefined,
): CandidateKeys | undefined {
  if (def.readsById === false) return undefined;
  return pinnedValues(where, ['id', ...def.unique]);
}

/** The values a filter pins one of `fields` to (the first such condition met), as `candidateKeys` describes. */
export function pinnedValues(where: BoolExpr | undefined, fields: readonly string[]): CandidateKeys | undefined {
  if (!where) return undefined;
  switch (where.kind) {
    case 'equals':
      if (where.negated || where.lhs.kind !== 'field' || !fields.includes(where.lhs.field)) return undefined;
      return where.value.type === 'string' ? { field: where.lhs.field, values: [where.value.value] } : undefined;
    case 'in': {
      if (where.negated || where.lhs.kind !== 'field' || !fields.includes(where.lhs.field)) return undefined;
      const values = where.values.flatMap((value) => (value.type === 'string' ? [value.value] : []));
      return values.length === where.values.length && values.length <= MAX_CANDIDATES
        ? { field: where.lhs.field, values: [...new Set(values)] }
        : undefined;
    }
    case 'and':
      for (const operand of where.operands) {
        const keys = pinnedValues(operand, fields);
        if (keys) return keys;
      }
      return undefined;
    default:
      return undefined;
  }
}
