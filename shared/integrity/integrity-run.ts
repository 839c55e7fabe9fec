import { ApiError } from '../errors/api-error.ts';
import type { Deps } from '../ports/deps.ts';
import {
  putSegmentFindings,
  readIntegrityStatusItem,
  replaceIntegrityStatus,
  runFindings,
  takeIntegrityStatus,
} from '../store/integrity-items.ts';
import type { IntegrityFinding, IntegrityMode, ReconcileCounters, ScanSegment } from './integrity-types.ts';
import { MAX_FINDINGS } from './integrity-types.ts';
import { reconcileCounters } from './reconcile-counters.ts';
import { scanSegment } from './scan-segment.ts';

/**
 * The integrity run's state in the table (`shared/store/integrity-items.ts`): one status item (the lock while a run is
 * in progress, then its results), and each run's findings as the segments store them.
 */
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
  const Item = await readIntegrityStatusItem(deps.store);
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
  const taken = await takeIntegrityStatus(
    deps.store,
    {
      runId,
      fixingErrors: mode === 'fix',
      tooManyErrors: false,
      startTime: now.toISOString(),
      lockedUntil: new Date(now.getTime() + LOCK_MS).toISOString(),
      results: '[]',
    },
    now.toISOString(),
  );
  if (!taken) throw new ApiError('RATE_LIMITED', { message: 'A data integrity check or fix is already running.' });
}

/** Ends the run `runId` (only if it still holds the lock): its results, or its error. */
async function endRun(
  deps: Deps,
  runId: string,
  outcome: { results?: readonly IntegrityFinding[]; tooManyErrors?: boolean; error?: string },
): Promise<void> {
  const current = await readIntegrityStatusItem(deps.store);
  if (current?.runId !== runId) return;
  // Another run took over a stale lock meanwhile: its status stays.
  await replaceIntegrityStatus(deps.store, runId, {
    ...current,
    inProgress: false,
    endTime: deps.now().toISOString(),
    tooManyErrors: outcome.tooManyErrors ?? false,
    results: JSON.stringify(outcome.results ?? []),
    ...(outcome.error !== undefined ? { error: outcome.error } : {}),
  });
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
  await putSegmentFindings(deps.store, input, result.findings, expiresAtEpoch);
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
  const all = [...(await runFindings(deps.store, input.runId, MAX_FINDINGS + 1)), ...counters];
  const tooManyErrors = all.length > MAX_FINDINGS || input.segments.some((segment) => segment.truncated);
  await endRun(deps, input.runId, { results: all.slice(0, MAX_FINDINGS), tooManyErrors });
  deps.metrics.count('IntegrityFindings', { mode: input.mode }, all.length);
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
  deps.logger.info('integrity task', { action: String(input.action), runId, mode });
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
