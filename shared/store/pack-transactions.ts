import { MAX_TRANSACTION_ITEMS, type Store } from './entity-store.ts';
import type { WriteOp } from './write-op.ts';

/**
 * Groups of writes (each one change, such as one entity's delete) packed in order into as few transactions as
 * DynamoDB's item limit allows, each group whole in one: what fits one transaction commits all or nothing. Items are
 * counted as `transact` sends them, the groups' shared counter and marker updates merged. A group past the limit on its
 * own is a transaction of its own, which `transact` refuses as too large.
 */
export function packTransactions(
  store: Pick<Store, 'transactionItemCount'>,
  groups: readonly (readonly WriteOp[])[],
): WriteOp[][] {
  const transactions: WriteOp[][] = [];
  let current: WriteOp[] = [];
  for (const group of groups) {
    const joined = [...current, ...group];
    if (current.length > 0 && store.transactionItemCount(joined) > MAX_TRANSACTION_ITEMS) {
      transactions.push(current);
      current = [...group];
    } else {
      current = joined;
    }
  }
  if (current.length > 0) transactions.push(current);
  return transactions;
}
