import type { IntegrityFinding, IntegrityMode, SegmentResult } from '#shared/integrity/integrity-types.ts';
import { reconcileCounters } from '#shared/integrity/reconcile-counters.ts';
import { scanSegment } from '#shared/integrity/scan-segment.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { asTableUser } from './table-grants.ts';

/** The segments' findings, then the counters reconciled with what they counted, as the run's `Finish` does. */
async function finish(deps: Deps, mode: IntegrityMode, results: readonly SegmentResult[]): Promise<IntegrityFinding[]> {
  const entityCounts: Record<string, number> = {};
  for (const result of results) {
    for (const [collection, n] of Object.entries(result.entityCounts))
      entityCounts[collection] = (entityCounts[collection] ?? 0) + n;
  }
  return [...results.flatMap((result) => result.findings), ...(await reconcileCounters(deps, { mode, entityCounts }))];
}

/**
 * A whole check or fix over `segments` parallel segments, counters reconciled, as the state machine runs it (in the
 * integrity function, held to its grant).
 */
export function integrityRun(deps: Deps, mode: IntegrityMode, segments = 4): Promise<IntegrityFinding[]> {
  return asTableUser('integrity', async () => {
    const results = await Promise.all(
      Array.from({ length: segments }, (_, segment) => scanSegment(deps, { mode, segment, totalSegments: segments })),
    );
    return finish(deps, mode, results);
  });
}

/**
 * A whole run with the segments one after another in `order`: one of the schedules the state machine's parallel Map
 * may take, so a test can make one segment's repairs land before or after another's.
 */
export function integrityRunInOrder(
  deps: Deps,
  mode: IntegrityMode,
  order: readonly number[],
): Promise<IntegrityFinding[]> {
  return asTableUser('integrity', async () => {
    const results: SegmentResult[] = [];
    for (const segment of order) results.push(await scanSegment(deps, { mode, segment, totalSegments: order.length }));
    return finish(deps, mode, results);
  });
}
