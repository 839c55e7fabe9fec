import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** What one measured run sent: requests, and waves (its longest chain of requests that waited on one another). */
export interface RoundTrips {
  readonly requests: number;
  readonly waves: number;
}

export interface DynamoDbTracker {
  /** Runs `run` and counts what the client sent meanwhile (one run at a time). */
  measure(run: () => Promise<unknown>): Promise<RoundTrips>;
}

const trackers = new WeakMap<DynamoDBDocumentClient, DynamoDbTracker>();

/**
 * Counts what a DynamoDB client sends: a request's wave is one more than the highest wave of the requests that had
 * completed when it was sent, so requests sent together share a wave and the count is the number of sequential round
 * trips. One middleware per client, however many tests ask.
 */
export function dynamoDbTracker(db: DynamoDBDocumentClient): DynamoDbTracker {
  const existing = trackers.get(db);
  if (existing) return existing;
  let counting = false;
  let requests = 0;
  let completedWave = 0;
  let deepest = 0;
  db.middlewareStack.add(
    (next) => async (args) => {
      if (!counting) return next(args);
      const wave = completedWave + 1;
      requests++;
      deepest = Math.max(deepest, wave);
      try {
        return await next(args);
      } finally {
        completedWave = Math.max(completedWave, wave);
      }
    },
    { step: 'initialize', name: 'testRoundTripCounter' },
  );
  const tracker: DynamoDbTracker = {
    async measure(run) {
      requests = 0;
      completedWave = 0;
      deepest = 0;
      counting = true;
      try {
        await run();
      } finally {
        counting = false;
      }
      return { requests, waves: deepest };
    },
  };
  trackers.set(db, tracker);
  return tracker;
}
