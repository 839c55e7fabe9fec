import type { Deps } from '../ports/deps.ts';

/**
 * The contract between the integrity scan's core (what a segment checks and repairs, derived from the entity
 * declarations) and its orchestration (the state machine, the single-run lock, the results item, the operations).
 * The core keeps nothing between calls: every input arrives in the call, every finding leaves in the answer.
 */

/** `check` only reports; `fix` repairs each finding idempotently, with the entity's own item as the truth. */
export type IntegrityMode = 'check' | 'fix';

/** One finding, as dataIntegrityResults shows it. */
export interface IntegrityFinding {
  readonly description: string;
  /** True once the fix was written (only in `fix` mode). */
  readonly fixed: boolean;
}

/** One parallel scan segment (DynamoDB `Segment` / `TotalSegments`). */
export interface SegmentInput {
  readonly mode: IntegrityMode;
  readonly segment: number;
  readonly totalSegments: number;
}

/** The most findings one segment returns; past this it says `truncated` (the run reports `tooManyErrors`). */
export const MAX_FINDINGS = 1000;

export interface SegmentResult {
  /** At most `MAX_FINDINGS`. */
  readonly findings: readonly IntegrityFinding[];
  /** More findings existed than were returned (or, in fix mode, than were repaired). */
  readonly truncated: boolean;
  /** Live entities of each collection met in this segment, for the counter reconciliation. */
  readonly entityCounts: Readonly<Record<string, number>>;
  /** Items read by the scan itself, and point reads made for the other side of relations (bench figures). */
  readonly itemsScanned: number;
  readonly pointReads: number;
}

/** Scans one segment of the table and checks (or fixes) every item it reads. */
export type ScanSegment = (deps: Deps, input: SegmentInput) => Promise<SegmentResult>;

/** Compares each type's counter shards with the entities the segments counted, and in fix mode sets them right. */
export type ReconcileCounters = (
  deps: Deps,
  input: { readonly mode: IntegrityMode; readonly entityCounts: Readonly<Record<string, number>> },
) => Promise<readonly IntegrityFinding[]>;
