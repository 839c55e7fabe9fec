import { signatureOfJwt } from '#shared/pki/session-jwt.ts';
import type { BoolExpr, OrderedLiteral } from '#shared/query/filter-ast.ts';

/** The stored field a filter on a session's `token` reads (its alias resolved): the token's signature. */
const TOKEN_FIELD = 'tokenSignature';

/** A whole compact JWS taken to its signature; any other literal (a signature, a number) as it is. */
function bySignature<L extends OrderedLiteral>(literal: L): L {
  return literal.type === 'string' && literal.value.includes('.')
    ? { ...literal, value: signatureOfJwt(literal.value) }
    : literal;
}

/**
 * A session filter whose `token =` / `token in` name whole tokens, as clients know them (the reference stores the
 * whole JWT), compared by their signatures: all a session's filter record keeps of its token, and as unique to it.
 * Other comparisons (`contains`, orders) read the signature as it is.
 */
export function tokensAsSignatures(expr: BoolExpr): BoolExpr {
  switch (expr.kind) {
    case 'and':
    case 'or':
      return { ...expr, operands: expr.operands.map(tokensAsSignatures) };
    case 'not':
      return { ...expr, operand: tokensAsSignatures(expr.operand) };
    case 'equals':
      return expr.lhs.field === TOKEN_FIELD && expr.value.type === 'string'
        ? { ...expr, value: bySignature(expr.value) }
        : expr;
    case 'in':
      return expr.lhs.field === TOKEN_FIELD ? { ...expr, values: expr.values.map(bySignature) } : expr;
    default:
      return expr;
  }
}
