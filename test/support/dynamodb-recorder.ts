import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TableUser } from '../../cdk/operation-groups.ts';
import { currentTableUser } from './table-grants.ts';

/** One request a document client sent while recording, with what DynamoDB answered. */
export interface SentCommand {
  /** `GetItemCommand`, `TransactWriteItemsCommand`, … */
  readonly command: string;
  /** As the store sent it. */
  readonly input: Readonly<Record<string, unknown>>;
  /** The function that sent it (`asTableUser`); undefined for a test's own requests. */
  readonly user: TableUser | undefined;
  /** Undefined when the request failed. */
  readonly output: Readonly<Record<string, unknown>> | undefined;
  /**
   * Its round trip: one more than the highest wave of the requests of this recording that had completed when it was
   * sent, so requests sent together share a wave and the highest is the number of sequential round trips.
   */
  readonly wave: number;
}

interface Recording {
  readonly sent: SentCommand[];
  completedWave: number;
}

const recordings = new WeakMap<DynamoDBDocumentClient, Set<Recording>>();

/** The client's open recordings, with the one middleware that feeds them (added once per client). */
function recordingsOf(db: DynamoDBDocumentClient): Set<Recording> {
  const existing = recordings.get(db);
  if (existing) return existing;
  const open = new Set<Recording>();
  db.middlewareStack.add(
    (next, context) => async (args) => {
      if (open.size === 0) return next(args);
      const input = args.input as Record<string, unknown>;
      const user = currentTableUser();
      const waves = [...open].map((recording) => [recording, recording.completedWave + 1] as const);
      let output: Record<string, unknown> | undefined;
      try {
        // Consumed capacity rides along on every recorded request, for those who count units.
        const result = await next({ ...args, input: { ...input, ReturnConsumedCapacity: 'TOTAL' } });
        output = result.output as Record<string, unknown>;
        return result;
      } finally {
        for (const [recording, wave] of waves) {
          recording.sent.push({ command: String(context.commandName), input, user, output, wave });
          recording.completedWave = Math.max(recording.completedWave, wave);
        }
      }
    },
    { step: 'initialize', name: 'testDynamoDbRecorder' },
  );
  recordings.set(db, open);
  return open;
}

/**
 * Every request the client sent while `run` ran, in the order they completed. Recordings may nest or overlap (each
 * sees every request of its own span); one middleware per client, however many tests ask.
 */
export async function recordSent(db: DynamoDBDocumentClient, run: () => Promise<unknown>): Promise<SentCommand[]> {
  const open = recordingsOf(db);
  const recording: Recording = { sent: [], completedWave: 0 };
  open.add(recording);
  try {
    await run();
  } finally {
    open.delete(recording);
  }
  return recording.sent;
}
