import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** How many requests a client has sent, by DynamoDB operation (`GetItem`, `Query`, `TransactWriteItems`, ...). */
export interface DynamoDbRequestCounter {
  /** A copy of the counts so far; subtract two snapshots to get what happened in between. */
  snapshot(): ReadonlyMap<string, number>;
  /**
   * Waves so far: how many times a request started while none was in flight. For one operation run on its own, that
   * is its number of sequential round trips (requests sent together with `Promise.all` share a wave).
   */
  waves(): number;
}

/**
 * Counts every `send` of a document client (and of the client it wraps: they share one middleware stack). The
 * middleware sits in the initialize step, so an SDK retry of the same command is not counted twice.
 */
export function countDynamoDbRequests(db: DynamoDBDocumentClient): DynamoDbRequestCounter {
  const counts = new Map<string, number>();
  let inFlight = 0;
  let waves = 0;
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
      counts.set(operation, (counts.get(operation) ?? 0) + 1);
      if (inFlight === 0) waves++;
      inFlight++;
      try {
        return await next(args);
      } finally {
        inFlight--;
      }
    },
    { step: 'initialize', name: 'benchRequestCounter' },
  );
  return { snapshot: () => new Map(counts), waves: () => waves };
}

/** What was sent between two snapshots, by operation. */
export function requestsBetween(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [operation, count] of after) {
    const sent = count - (before.get(operation) ?? 0);
    if (sent > 0) delta.set(operation, sent);
  }
  return delta;
}
