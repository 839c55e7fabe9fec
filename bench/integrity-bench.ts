import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { createDeps } from '#functions/create-deps.ts';
import { ensureTable } from '#local/create-table.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { reconcileCounters } from '#shared/integrity/reconcile-counters.ts';
import { scanSegment } from '#shared/integrity/scan-segment.ts';
import { createLogger } from '#shared/log/logger.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { SessionBenchOptions } from './api-session-bench.ts';
import { benchConfig } from './bench-config.ts';
import { countDynamoDbRequests, requestsBetween } from './count-dynamodb-requests.ts';
import { seedIdentitiesInBulk } from './seed-identities-in-bulk.ts';

/** Table sizes (items) the check is timed at; the larger only with `BENCH_LARGE=1`. */
export const INTEGRITY_ITEMS = [10_000, 100_000] as const;
export const INTEGRITY_SEGMENTS = [1, 4, 8] as const;

export interface IntegrityRow {
  readonly items: number;
  readonly segments: number;
  readonly ms: number;
  readonly itemsScanned: number;
  readonly pointReads: number;
  /** DynamoDB requests by operation over the whole check. */
  readonly requests: ReadonlyMap<string, number>;
  readonly findings: number;
}

async function tableItems(deps: Deps): Promise<number> {
  let items = 0;
  for await (const page of paginateScan(
    { client: deps.store.db },
    { TableName: deps.store.tableName, Select: 'COUNT' },
  )) {
    items += page.Count ?? 0;
  }
  return items;
}

/**
 * A whole check (every segment in parallel, then the counters) on a table of identities seeded until it holds about
 * `sizes` items, timed per segment count. The bulk seeding writes no role catalog, so each check reports those few
 * entries (the findings column). Identities bring their markers, id-order items (with their filter records) and
 * role members, so the scan meets every kind of derived item.
 */
export async function integrityBench(options: SessionBenchOptions, sizes: readonly number[]): Promise<IntegrityRow[]> {
  const config = benchConfig('bench-integrity', options.dynamoDbEndpoint);
  const deps: Deps = { ...createDeps(config), logger: createLogger({}, { write: () => undefined }) };
  const counter = countDynamoDbRequests(deps.store.db);
  await ensureTable(deps.store.db, config.tableName);
  // The seeded identities name the seeded identity types and default auth policy.
  await bootstrap(deps, { adminUsername: options.adminUsername, adminPassword: options.adminPassword });
  const rows: IntegrityRow[] = [];
  let seeded = 0;
  try {
    for (const size of sizes) {
      // About five items an identity: entity, name marker, id-order item, one or two role members.
      while ((await tableItems(deps)) < size) {
        const next = seeded + Math.max(500, Math.ceil((size - (await tableItems(deps))) / 5));
        options.progress(`seeding identities ${seeded}…${next}`);
        await seedIdentitiesInBulk(deps, seeded, next);
        seeded = next;
      }
      const items = await tableItems(deps);
      for (const segments of INTEGRITY_SEGMENTS) {
        options.progress(`checking ${items} items over ${segments} segment(s)`);
        const before = counter.snapshot();
        const started = performance.now();
        const results = await Promise.all(
          Array.from({ length: segments }, (_, segment) =>
            scanSegment(deps, { mode: 'check', segment, totalSegments: segments }),
          ),
        );
        const entityCounts: Record<string, number> = {};
        for (const result of results) {
          for (const [collection, n] of Object.entries(result.entityCounts)) {
            entityCounts[collection] = (entityCounts[collection] ?? 0) + n;
          }
        }
        const counters = await reconcileCounters(deps, { mode: 'check', entityCounts });
        rows.push({
          items,
          segments,
          ms: performance.now() - started,
          itemsScanned: results.reduce((sum, result) => sum + result.itemsScanned, 0),
          pointReads: results.reduce((sum, result) => sum + result.pointReads, 0),
          requests: requestsBetween(before, counter.snapshot()),
          findings: results.reduce((sum, result) => sum + result.findings.length, 0) + counters.length,
        });
      }
    }
    return rows;
  } finally {
    deps.store.db.destroy();
  }
}
