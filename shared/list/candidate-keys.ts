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
  if (!where || def.readsById === false) return undefined;
  const keyField = (field: string) => field === 'id' || (def.unique as readonly string[]).includes(field);
  switch (where.kind) {
    case 'equals':
      if (where.negated || where.lhs.kind !== 'field' || !keyField(where.lhs.field) || where.value.type !== 'string') {
        return undefined;
      }
      return { field: where.lhs.field, values: [where.value.value] };
    case 'in': {
      if (where.negated || where.lhs.kind !== 'field' || !keyField(where.lhs.field)) return undefined;
      const values = where.values.flatMap((value) => (value.type === 'string' ? [value.value] : []));
      return values.length === where.values.length && values.length <= MAX_CANDIDATES
        ? { field: where.lhs.field, values: [...new Set(values)] }
        : undefined;
    }
    case 'and':
      for (const operand of where.operands) {
        const keys = candidateKeys(def, operand);
        if (keys) return keys;
      }
      return undefined;
    default:
      return undefined;
  }
}
