import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { recordSent } from './dynamodb-recorder.ts';

/** What one measured run sent: requests, and waves (its longest chain of requests that waited on one another). */
export interface RoundTrips {
  readonly requests: number;
  readonly waves: number;
}

export interface DynamoDbTracker {
  /** Runs `run` and counts what the client sent meanwhile. */
  measure(run: () => Promise<unknown>): Promise<RoundTrips>;
}

/** Counts what a DynamoDB client sends: requests, and the sequential round trips they took (`SentCommand.wave`). */
export function dynamoDbTracker(db: DynamoDBDocumentClient): DynamoDbTracker {
  return {
    async measure(run) {
      const sent = await recordSent(db, run);
      return { requests: sent.length, waves: Math.max(0, ...sent.map((request) => request.wave)) };
    },
  };
}
