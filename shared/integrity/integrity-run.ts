import { BatchWriteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ApiError } from '../errors/api-error.ts';
import type { Deps } from '../ports/deps.ts';
import { queryAll } from '../store/index-queries.ts';
import { keys } from '../store/keys.ts';
import type { IntegrityFinding, IntegrityMode, ReconcileCounters, ScanSegment } from './integrity-types.ts';
import { MAX_FINDINGS } from './integrity-types.ts';
import { reconcileCounters } from './reconcile-counters.ts';
import { scanSegment } from './scan-segment.ts';

/**
 * The integrity run's state in the table, under the prefix the scan skips: one status item (the lock while a run is
 * in progress, then its results), and each run's findings as the segments store them.
 */
const STATUS_KEY = keys.integrity('status');
const findingsPartition = keys.integrityFindings;
/** A lock older than this belongs to a run that died without freeing it: the next request takes it over. */
const LOCK_MS = 60 * 60_000;
/** How long a run's findings items stay after it ends (DynamoDB's TTL removes them). */
const FINDINGS_TTL_SECONDS = 24 * 60 * 60;

/** What dataIntegrityResults shows. */
export interface IntegrityStatus {
  readonly inProgress: boolean;
  readonly fixingErrors: boolean;
  readonly tooManyErrors: boolean;
  readonly startTime: string | null;
  readonly endTime: string | null;
  /** Why the last run failed; empty when it did not (the documents make it a required string). */
  readonly error: string;
  readonly results: readonly IntegrityFinding[];
}

const IDLE: IntegrityStatus = {
  inProgress: false,
  fixingErrors: false,
  tooManyErrors: false,
  startTime: null,
  endTime: null,
  error: '',
  results: [],
};

export async function readIntegrityStatus(deps: Deps): Promise<IntegrityStatus> {
  const { Item } = await deps.store.db.send(
    new GetCommand({ TableName: deps.store.tableName, Key: STATUS_KEY, ConsistentRead: true }),
  );
  if (!Item) return IDLE;
  return {
    inProgress: Item.inProgress === true,
    fixingErrors: Item.fixingErrors === true,
    tooManyErrors: Item.tooManyErrors === true,
    startTime: typeof Item.startTime === 'string' ? Item.startTime : null,
    endTime: typeof Item.endTime === 'string' ? Item.endTime : null,
    error: typeof Item.error === 'string' ? Item.error : '',
    results: typeof Item.results === 'string' ? (JSON.parse(Item.results) as IntegrityFinding[]) : [],
  };
}

/**
 * Takes the single-run lock for `runId` (429 `RATE_LIMITED` while another check or fix runs, unless its lock is
 * stale) and marks the run started.
 */
export async function takeIntegrityLock(deps: Deps, runId: string, mode: IntegrityMode): Promise<void> {
  const now = deps.now();
  try {
    await deps.store.db.send(
      new PutCommand({
        TableName: deps.store.tableName,
        Item: {
          ...STATUS_KEY,
          runId,
          inProgress: true,
          fixingErrors: mode === 'fix',
          tooManyErrors: false,
          startTime: now.toISOString(),
          lockedUntil: new Date(now.getTime() + LOCK_MS).toISOString(),
          results: '[]',
        },
        ConditionExpression: 'attribute_not_exists(PK) OR inProgress = :false OR lockedUntil < :now',
        ExpressionAttributeValues: { ':false': false, ':now': now.toISOString() },
      }),
    );
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    throw new ApiError('RATE_LIMITED', { message: 'A data integrity check or fix is already running.' });
  }
}

/** Ends the run `runId` (only if it still holds the lock): its results, or its error. */
async function endRun(
  deps: Deps,
  runId: string,
  outcome: { results?: readonly IntegrityFinding[]; tooManyErrors?: boolean; error?: string },
): Promise<void> {
  const current = await deps.store.db.send(
    new GetCommand({ TableName: deps.store.tableName, Key: STATUS_KEY, ConsistentRead: true }),
  );
  if (current.Item?.runId !== runId) return;
  await deps.store.db.send(
    new PutCommand({
      TableName: deps.store.tableName,
      Item: {
        ...current.Item,
        inProgress: false,
        endTime: deps.now().toISOString(),
        tooManyErrors: outcome.tooManyErrors ?? false,
        results: JSON.stringify(outcome.results ?? []),
        ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      },
      ConditionExpression: 'runId = :runId',
      ExpressionAttributeValues: { ':runId': runId },
    }),
  );
}

/** Frees the lock of a run that could not start, recording why. */
export function failIntegrityRun(deps: Deps, runId: string, error: string): Promise<void> {
  return endRun(deps, runId, { error });
}

/** One segment's answer to the state machine: counts only. */
export interface SegmentSummary {
  readonly entityCounts: Readonly<Record<string, number>>;
  readonly findings: number;
  readonly truncated: boolean;
  readonly itemsScanned: number;
  readonly pointReads: number;
}

/** The scan and counter functions a run uses (the real ones; tests may pass others to fail a segment). */
export interface IntegrityCore {
  readonly scanSegment: ScanSegment;
  readonly reconcileCounters: ReconcileCounters;
}

export const INTEGRITY_CORE: IntegrityCore = { scanSegment, reconcileCounters };

/** `scan`: checks one segment and stores its findings under the run. */
export async function runSegment(
  deps: Deps,
  input: { runId: string; mode: IntegrityMode; segment: number; totalSegments: number },
  core: IntegrityCore = INTEGRITY_CORE,
): Promise<SegmentSummary> {
  const result = await core.scanSegment(deps, input);
  const expiresAtEpoch = Math.ceil(deps.now().getTime() / 1000) + FINDINGS_TTL_SECONDS;
  const items = result.findings.map((finding, index) => ({
    PK: findingsPartition(input.runId),
    SK: `${String(input.segment).padStart(4, '0')}#${String(index).padStart(5, '0')}`,
    ...finding,
    expiresAtEpoch,
  }));
  for (let i = 0; i < items.length; i += 25) {
    let requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) {
      const { UnprocessedItems } = await deps.store.db.send(
        new BatchWriteCommand({ RequestItems: { [deps.store.tableName]: requests } }),
      );
      requests = (UnprocessedItems?.[deps.store.tableName] ?? []) as typeof requests;
    }
  }
  return {
    entityCounts: result.entityCounts,
    findings: result.findings.length,
    truncated: result.truncated,
    itemsScanned: result.itemsScanned,
    pointReads: result.pointReads,
  };
}

/** `finish`: reconciles the counters and writes the results (at most `MAX_FINDINGS`), freeing the lock. */
export async function finishRun(
  deps: Deps,
  input: { runId: string; mode: IntegrityMode; segments: readonly SegmentSummary[] },
  core: IntegrityCore = INTEGRITY_CORE,
): Promise<{ findings: number }> {
  const entityCounts: Record<string, number> = {};
  for (const segment of input.segments) {
    for (const [collection, count] of Object.entries(segment.entityCounts)) {
      entityCounts[collection] = (entityCounts[collection] ?? 0) + count;
    }
  }
  const counters = await core.reconcileCounters(deps, { mode: input.mode, entityCounts });
  const stored = await queryAll(deps.store, {
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': findingsPartition(input.runId) },
    Limit: MAX_FINDINGS + 1,
  });
  const all = [
    ...stored.map((item) => ({ description: String(item.description), fixed: item.fixed === true })),
    ...counters,
  ];
  const tooManyErrors = all.length > MAX_FINDINGS || input.segments.some((segment) => segment.truncated);
  await endRun(deps, input.runId, { results: all.slice(0, MAX_FINDINGS), tooManyErrors });
  return { findings: all.length };
}

/** `fail`: records why the run failed, freeing the lock. */
export async function recordRunFailure(
  deps: Deps,
  input: { runId: string; failure?: { Error?: string; Cause?: string } },
): Promise<void> {
  const failure = input.failure ?? {};
  await endRun(deps, input.runId, { error: [failure.Error, failure.Cause].filter(Boolean).join(': ') || 'failed' });
}

/**
 * The integrity function's one entry: the state machine's Tasks name their `action`. Each input is checked, so a
 * malformed event fails the Task (and the run records it) rather than acting on guesses.
 */
export async function integrityTask(
  deps: Deps,
  event: unknown,
  core: IntegrityCore = INTEGRITY_CORE,
): Promise<unknown> {
  const input = (event ?? {}) as Record<string, unknown>;
  const runId = String(input.runId ?? '');
  const mode = input.mode === 'fix' ? 'fix' : 'check';
  if (runId === '') throw new Error('integrity task without a runId');
  switch (input.action) {
    case 'scan':
      return runSegment(
        deps,
        { runId, mode, segment: Number(input.segment), totalSegments: Number(input.totalSegments) },
        core,
      );
    case 'finish':
      return finishRun(deps, { runId, mode, segments: (input.segments ?? []) as SegmentSummary[] }, core);
    case 'fail':
      await recordRunFailure(deps, { runId, failure: (input.failure ?? {}) as { Error?: string; Cause?: string } });
      return {};
    default:
      throw new Error(`unknown integrity task ${String(input.action)}`);
  }
}
