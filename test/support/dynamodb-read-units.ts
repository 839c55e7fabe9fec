import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { recordSent } from './dynamodb-recorder.ts';

/** What the reads of one measured run cost. */
export interface ReadCosts {
  /** Read units as DynamoDB Local reports them (`ReturnConsumedCapacity`; a query that finds nothing reports 0). */
  readonly readUnits: number;
  /** Keys read one by one (GetItem, and each key of a BatchGetItem): each costs a unit, however small its item. */
  readonly keysRead: number;
}

export interface DynamoDbReadUnits {
  /** Runs `run` and adds up what its reads cost. */
  measure(run: () => Promise<unknown>): Promise<ReadCosts>;
}

const READS: ReadonlySet<string> = new Set(['GetItemCommand', 'QueryCommand', 'BatchGetItemCommand']);

type Capacity = { CapacityUnits?: number };

/** Adds up the consumed capacity of the reads a document client sends while measuring, and the keys they name. */
export function dynamoDbReadUnits(db: DynamoDBDocumentClient): DynamoDbReadUnits {
  return {
    async measure(run) {
      let readUnits = 0;
      let keysRead = 0;
      for (const { command, input, output } of await recordSent(db, run)) {
        if (!READS.has(command)) continue;
        if (command === 'GetItemCommand') keysRead++;
        const batch = (input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>;
        for (const request of Object.values(batch)) keysRead += request.Keys?.length ?? 0;
        const consumed = output?.ConsumedCapacity as Capacity | Capacity[] | undefined;
        for (const entry of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
          readUnits += entry.CapacityUnits ?? 0;
        }
      }
      return { readUnits, keysRead };
    },
  };
}
