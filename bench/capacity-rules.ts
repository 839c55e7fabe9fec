import { type CapacityKind, TABLE_TARGET } from './capacity-tally.ts';
import type { ItemFacts } from './item-facts.ts';
import { failedWrite, type ItemWrite, transactWrites } from './write-model.ts';

/**
 * AWS's rules for the request units a DynamoDB request consumes, applied to what DynamoDB Local reports. Local
 * reports what AWS does for single-item reads and writes, batch writes, queries that find something and index
 * writes outside transactions (checked at each run by `capacity-check.ts`). Where it does not, the bench charges
 * AWS's rule:
 *
 * - a query or scan page that reads nothing: Local 0, AWS at least one unit (0.5 eventually consistent);
 * - a key a BatchGetItem does not find: Local 0, AWS one read as a GetItem of it (0.5 eventually consistent);
 * - TransactWriteItems: Local's figures are not AWS's at all (see `write-model.ts`): every item is charged by AWS's
 *   rules instead;
 * - a conditional PutItem, UpdateItem or DeleteItem whose condition fails: Local reports nothing (neither does AWS in
 *   the response), AWS bills a write unit per KB of the larger of the stored and the new item.
 *
 * A cancelled transaction reports nothing, on AWS too; the bench counts it apart and charges nothing for it.
 */

/** The operations that take `ReturnConsumedCapacity` (the SDK's command names without `Command`). */
export const CAPACITY_OPERATIONS: ReadonlySet<string> = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
  'ExecuteStatement',
  'BatchExecuteStatement',
  'ExecuteTransaction',
]);

const READ_OPERATIONS: ReadonlySet<string> = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

export interface Charge {
  readonly kind: CapacityKind;
  readonly target: string;
  readonly units: number;
}

export interface RequestCapacity {
  /** Units as Local reported them (corrected where it is off). */
  readonly charges: readonly Charge[];
  /** Units the bench works out item by item, some once the items can be read (`write-model.ts`). */
  readonly writes: readonly ItemWrite[];
  /** Set for requests AWS reports no capacity for and the bench charges nothing: a cancelled transaction. */
  readonly unpriced?: string;
}

type Capacity = { CapacityUnits?: number };
interface ConsumedCapacity extends Capacity {
  TableName?: string;
  Table?: Capacity;
  GlobalSecondaryIndexes?: Record<string, Capacity>;
}

/** What Local reported, as charges on the table and each index. */
function reported(kind: CapacityKind, consumed: unknown): Charge[] {
  const list = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as ConsumedCapacity[];
  return list.flatMap((entry) => {
    const charges: Charge[] = [];
    const indexes = Object.entries(entry.GlobalSecondaryIndexes ?? {});
    const indexUnits = indexes.reduce((sum, [, capacity]) => sum + (capacity.CapacityUnits ?? 0), 0);
    const tableUnits = entry.Table?.CapacityUnits ?? (entry.CapacityUnits ?? 0) - indexUnits;
    charges.push({ kind, target: TABLE_TARGET, units: tableUnits });
    for (const [name, capacity] of indexes) {
      charges.push({ kind, target: name, units: capacity.CapacityUnits ?? 0 });
    }
    return charges;
  });
}

type Input = Record<string, unknown>;
type Output = Record<string, unknown>;

function queryCharges(input: Input, output: Output): Charge[] {
  const charges = reported('read', output.ConsumedCapacity);
  const total = charges.reduce((sum, charge) => sum + charge.units, 0);
  if (total > 0) return charges;
  const target = typeof input.IndexName === 'string' ? input.IndexName : TABLE_TARGET;
  return [{ kind: 'read', target, units: input.ConsistentRead === true ? 1 : 0.5 }];
}

function batchGetCharges(input: Input, output: Output): Charge[] {
  const charges = reported('read', output.ConsumedCapacity);
  const requested = (input.RequestItems ?? {}) as Record<string, { Keys?: unknown[]; ConsistentRead?: boolean }>;
  const found = (output.Responses ?? {}) as Record<string, unknown[]>;
  const unprocessed = (output.UnprocessedKeys ?? {}) as Record<string, { Keys?: unknown[] }>;
  for (const [table, request] of Object.entries(requested)) {
    const missing = (request.Keys?.length ?? 0) - (found[table]?.length ?? 0) - (unprocessed[table]?.Keys?.length ?? 0);
    if (missing > 0) {
      charges.push({ kind: 'read', target: TABLE_TARGET, units: missing * (request.ConsistentRead ? 1 : 0.5) });
    }
  }
  return charges;
}

/**
 * The units one request consumed under AWS's rules, from its input and what Local answered (`output`), or the error
 * it failed with.
 */
export function capacityOfRequest(
  operation: string,
  input: Input,
  result: { readonly output: Output } | { readonly error: unknown },
  facts: ItemFacts,
): RequestCapacity {
  if ('error' in result) {
    const name = (result.error as { name?: string }).name;
    if (name === 'ConditionalCheckFailedException') return { charges: [], writes: [failedWrite(operation, input)] };
    if (name === 'TransactionCanceledException') return { charges: [], writes: [], unpriced: 'cancelled transaction' };
    return { charges: [], writes: [], unpriced: `${operation} failed (${name ?? 'error'})` };
  }
  const { output } = result;
  switch (operation) {
    case 'Query':
    case 'Scan':
      return { charges: queryCharges(input, output), writes: [] };
    case 'BatchGetItem':
      return { charges: batchGetCharges(input, output), writes: [] };
    case 'TransactWriteItems':
      return { charges: [], writes: transactWrites(input, facts) };
    default:
      return {
        charges: reported(READ_OPERATIONS.has(operation) ? 'read' : 'write', output.ConsumedCapacity),
        writes: [],
      };
  }
}
