import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** What the reads of one measured run cost. */
export interface ReadCosts {
  /** Read units as DynamoDB Local reports them (`ReturnConsumedCapacity`; a query that finds nothing reports 0). */
  readonly readUnits: number;
  /** Keys read one by one (GetItem, and each key of a BatchGetItem): each costs a unit, however small its item. */
  readonly keysRead: number;
}

export interface DynamoDbReadUnits {
  /** Runs `run` and adds up what its reads cost (one run at a time). */
  measure(run: () => Promise<unknown>): Promise<ReadCosts>;
}

const READS: ReadonlySet<string> = new Set(['GetItemCommand', 'QueryCommand', 'BatchGetItemCommand']);
const meters = new WeakMap<DynamoDBDocumentClient, DynamoDbReadUnits>();

type Capacity = { CapacityUnits?: number };

/**
 * Asks every read a document client sends while measuring for its consumed capacity, and adds it up. One middleware
 * per client, however many tests ask.
 */
export function dynamoDbReadUnits(db: DynamoDBDocumentClient): DynamoDbReadUnits {
  const existing = meters.get(db);
  if (existing) return existing;
  let counting = false;
  let readUnits = 0;
  let keysRead = 0;
  db.middlewareStack.add(
    (next, context) => async (args) => {
      if (!counting || !READS.has(String(context.commandName))) return next(args);
      const input = args.input as { RequestItems?: Record<string, { Keys?: unknown[] }> };
      if (context.commandName === 'GetItemCommand') keysRead++;
      for (const request of Object.values(input.RequestItems ?? {})) keysRead += request.Keys?.length ?? 0;
      const result = await next({ ...args, input: { ...input, ReturnConsumedCapacity: 'TOTAL' } });
      const consumed = (result.output as { ConsumedCapacity?: Capacity | Capacity[] }).ConsumedCapacity;
      for (const entry of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
        readUnits += entry.CapacityUnits ?? 0;
      }
      return result;
    },
    { step: 'initialize', name: 'testReadUnits' },
  );
  const meter: DynamoDbReadUnits = {
    async measure(run) {
      readUnits = 0;
      keysRead = 0;
      counting = true;
      try {
        await run();
      } finally {
        counting = false;
      }
      return { readUnits, keysRead };
    },
  };
  meters.set(db, meter);
  return meter;
}
