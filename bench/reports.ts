import { LOGIN_TRIES, type LoginTimingFigures, SESSION_OWNERS, type SessionListFigures } from './api-session-bench.ts';
import { AWS_PRICES } from './aws-prices.ts';
import type { EntityScaleRow } from './entity-scale-bench.ts';
import type { IntegrityRow } from './integrity-bench.ts';
import type { LoginFactorRow } from './login-factors-bench.ts';
import { markdownTable } from './markdown-table.ts';
import type { BundleFigures } from './measure-bundles.ts';
import type { OperationFigures } from './measure-operation.ts';
import {
  FIGURE_HEADERS,
  FIGURE_NUMERIC,
  failedCells,
  figureCells,
  figureNotes,
  ms,
  operationsTable,
  perOp,
  units,
} from './operations-table.ts';
import { percentile } from './percentile.ts';
import type { PkiRow } from './pki-bench.ts';
import { type PartitionHeat, POLICY_NETWORK, type PolicyRow, type PolicyStepRow } from './policy-bench.ts';

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

/** How the dollar columns are worked out, printed once with the first table. */
export function costNote(): string {
  const { dynamoDb, lambda, apiGateway } = AWS_PRICES;
  return [
    `Dollars per million runs at AWS's public on-demand prices of ${AWS_PRICES.asOf} (${AWS_PRICES.region}, ` +
      "`bench/aws-prices.ts`): the run's request units (DynamoDB on-demand, " +
      `$${dynamoDb.writeRequestUnit} per million write units, $${dynamoDb.readRequestUnit} per million read units), ` +
      `its Lambda invocations ($${lambda.requests} per million) and their billed duration on arm64 at the ` +
      'memory of the function that answers each request (`cdk/function-memory.ts`) ' +
      `($${lambda.arm64GbSecond} per GB-second; the local server's time per request, rounded up to the ms as Lambda ` +
      'bills it, the median run\'s) make "backend"; "all-in" adds API Gateway REST ' +
      `($${apiGateway.restApi} per million; an HTTP API would be $${apiGateway.httpApi}).`,
    'RRU/WRU are read and write request units under AWS\'s rules (see "Request units: DynamoDB Local against AWS").',
  ].join(' ');
}

/** The list's figures, or why it has none (at 100,000 identities it can outlast the function timeout). */
export type ContainsRow = {
  size: number;
  list: OperationFigures | string;
  recordsRead: OperationFigures;
  pointRead?: OperationFigures;
};

/** `name contains` on identities (a filter that pins nothing) at each size, against its p50 target. */
export function containsReport(
  rows: readonly ContainsRow[],
  targets: Readonly<Record<number, number>>,
  large: { readonly size: number; readonly measured: boolean; readonly asked: boolean },
): string {
  return [
    '### A filter that pins nothing: identities, `name contains`',
    '',
    markdownTable(
      [
        'identities',
        'n',
        'p50 ms',
        'p95 ms',
        'waves/op',
        'requests/op',
        'RRU/op',
        'p50 target ms',
        '× a point read (p50)',
        'filter records read alone, p50 / p95 ms',
      ],
      rows.map(({ size, list, recordsRead, pointRead }) => {
        const target = targets[size] ?? Number.NaN;
        const met = typeof list !== 'string' && list.p50Ms <= target;
        const figures =
          typeof list === 'string'
            ? ['', `failed: ${list}`, '', '', '', '']
            : [
                String(list.iterations),
                ms(list.p50Ms),
                ms(list.p95Ms),
                perOp(list.wavesPerOp),
                perOp(list.requestsPerOp),
                units(list.readUnitsPerOp),
              ];
        const times =
          pointRead && typeof list !== 'string'
            ? `${(list.p50Ms / pointRead.p50Ms).toFixed(1)} (point read ${ms(pointRead.p50Ms)} ms)`
            : '';
        return [
          size.toLocaleString('en-US'),
          ...figures,
          `${target} (${met ? 'met' : 'missed'})`,
          times,
          `${ms(recordsRead.p50Ms)} / ${ms(recordsRead.p95Ms)}`,
        ];
      }),
      [false, true, true, true, true, true, true, true, true, true],
    ),
    '',
    'The point read is `GET /identities/{id}` at the same size. The last column times `filterRecords` called on the ' +
      "store directly with the filter's needle, as the list calls it (the parallel key-range queries, which read every " +
      "record and send back those holding the needle, and the SDK's unmarshalling): the rest of a list's time is the " +
      "HTTP round trip, parsing the filter, filtering and sorting the records in memory, and reading and rendering the page's entities.",
    '',
    large.measured
      ? `The identities were topped up to ${large.size.toLocaleString('en-US')} after every other table, the items ` +
        "each create's transaction writes put in batches (`seed-identities-in-bulk.ts`)."
      : large.asked
        ? `${large.size.toLocaleString('en-US')} identities follow at the end.`
        : `Set \`BENCH_LARGE=1\` to measure it at ${large.size.toLocaleString('en-US')} identities too, at the end.`,
  ].join('\n');
}

/** The API-session list page at each stored count, and how its cost grows (it should not). */
export function sessionListReport(figures: readonly SessionListFigures[]): string {
  const rows = figures.map(({ storedSessions, totalCount, figures: operation }) => ({
    label: `list API sessions, \`limit=10\`, ${storedSessions.toLocaleString('en-US')} stored (${totalCount.toLocaleString('en-US')} live)`,
    figures: operation,
  }));
  const first = figures[0]?.figures;
  const last = figures.at(-1)?.figures;
  const ratio = first && last ? (last.p50Ms / first.p50Ms).toFixed(2) : 'n/a';
  return [
    '### API sessions',
    '',
    operationsTable(rows),
    '',
    `p50 at ${figures.at(-1)?.storedSessions.toLocaleString('en-US')} stored sessions / at ${figures[0]?.storedSessions}: ` +
      `${ratio} (target ≤ 2); DynamoDB requests per call: ${figures.map((f) => perOp(f.figures.requestsPerOp)).join(' and ')}. ` +
      `Sessions are seeded through the store (the writes a login commits), spread over the admin and ${SESSION_OWNERS} ` +
      'seeded identities.',
  ].join('\n');
}

/** The integrity check's scan by table size and segments. */
export function integrityReport(rows: readonly IntegrityRow[]): string {
  return [
    '### Integrity check',
    '',
    markdownTable(
      ['table items', 'segments', 'check ms', 'items scanned', 'point reads', 'DynamoDB requests', 'findings'],
      rows.map((row) => [
        row.items.toLocaleString('en-US'),
        String(row.segments),
        ms(row.ms),
        row.itemsScanned.toLocaleString('en-US'),
        row.pointReads.toLocaleString('en-US'),
        [...row.requests]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([operation, count]) => `${operation} ${count}`)
          .join(', '),
        String(row.findings),
      ]),
      [true, true, true, true, true, false, true],
    ),
  ].join('\n');
}

/** Logins with their second factors. */
export function loginFactorsReport(rows: readonly LoginFactorRow[]): string {
  const fetches = rows
    .filter((row) => row.jwksFetchesPerLogin !== undefined)
    .map((row) => `${row.label}: ${perOp(row.jwksFetchesPerLogin ?? 0)} JWKS fetches per login`);
  return ['### Logins with second factors', '', operationsTable(rows), '', ...fetches].join('\n');
}

export function pkiReport(rows: readonly PkiRow[]): string {
  const signs = rows.map(
    (row) =>
      `${row.label}: ${perOp(row.signsPerOp)} signatures per run (${perOp(row.figures.kmsPerOp)} of them KMS \`Sign\` ` +
      'requests in AWS: the CA keys are in KMS, the server key is held)',
  );
  return ['### Enrollment and certificate login', '', operationsTable(rows), '', ...signs].join('\n');
}

/** Failed logins: a known username with a wrong password against an unknown username. */
export function loginTimingReport(figures: LoginTimingFigures): string {
  const known = percentile(figures.knownUserWrongPasswordMs, 0.5);
  const unknown = percentile(figures.unknownUserMs, 0.5);
  const row = (label: string, samples: readonly number[]) => [
    label,
    String(samples.length),
    ms(percentile(samples, 0.5)),
    ms(percentile(samples, 0.95)),
  ];
  return [
    '### Failed login timing',
    '',
    markdownTable(
      ['login', 'n', 'median ms', 'p95 ms'],
      [
        row('known username, wrong password', figures.knownUserWrongPasswordMs),
        row('unknown username', figures.unknownUserMs),
      ],
      [false, true, true, true],
    ),
    '',
    `Difference of medians (known − unknown): ${ms(known - unknown)} ms. ${LOGIN_TRIES} tries of each, alternating ` +
      '(which goes first alternates too), after a few unmeasured ones.',
  ].join('\n');
}

/** The policy scenario's table: each operation with its requests and sequential waves, against its target. */
export function policyReport(rows: readonly PolicyRow[]): string {
  const n = POLICY_NETWORK;
  return [
    '### Policies',
    '',
    markdownTable(
      ['operation', ...FIGURE_HEADERS, 'p50 target ms'],
      rows.map(({ label, figures, targetMs }) => {
        const target =
          targetMs === undefined
            ? ''
            : `${targetMs} (${typeof figures !== 'string' && figures.p50Ms <= targetMs ? 'met' : 'missed'})`;
        return [label, ...(typeof figures === 'string' ? failedCells(figures) : figureCells(figures)), target];
      }),
      [false, ...FIGURE_NUMERIC, true],
    ),
    ...figureNotes(rows).map((note) => `\n${note}`),
    '',
    `On a table of their own: ${n.identities.toLocaleString('en-US')} identities, ${n.services.toLocaleString('en-US')} ` +
      `services, ${n.edgeRouters} edge routers and ${n.servicePolicies + n.edgeRouterPolicies + n.serviceEdgeRouterPolicies} ` +
      `policies (${n.servicePolicies} service, ${n.edgeRouterPolicies} edge router, ${n.serviceEdgeRouterPolicies} ` +
      'service edge router; one side in twenty `#all`, one in four one to three `@ids`, the rest one or two attributes; ' +
      'AllOf and AnyOf alternating). The client is a non-admin identity with the attributes `eng` and `emea`. A wave is ' +
      'a run of DynamoDB requests in flight together; the waves of a request are its sequential round trips. The ' +
      'session row asks again for a session the API session already has: the stored one comes back and nothing is ' +
      'written (a fresh Dial is in the next table).',
  ].join('\n');
}

/** The client's service list and a fresh session at each policy count. */
export function policyStepsReport(rows: readonly PolicyStepRow[]): string {
  return [
    "### Policies: the client's service list and a fresh session, by policies stored",
    '',
    operationsTable(
      rows.map(({ policies, label, figures }) => ({
        label: `${policies.toLocaleString('en-US')} policies: ${label}`,
        figures,
      })),
    ),
    '',
    'The same network with 50, 500 and 2,000 policies (service : edge router : service edge router policies as 6 : 3 : ' +
      '1; each step adds to the one before). A fresh Dial is a service the API session has no session for yet: each ' +
      'run dials the next service the client may dial (tried once beforehand on an API session of its own), and the ' +
      'client logs in again, uncounted, when it has dialled them all.',
  ].join('\n');
}

/** Which partitions a mixed workload's writes went to. */
export function heatReport(heat: PartitionHeat | string): string {
  if (typeof heat === 'string') return ['### Partition heat', '', `failed: ${heat}`].join('\n');
  const row = (entry: PartitionHeat['partitions'][number]) => [
    entry.target,
    `\`${entry.partition}\``,
    units(entry.units),
    `${(entry.share * 100).toFixed(1)}%`,
  ];
  return [
    '### Partition heat: a mixed workload of authenticated requests',
    '',
    markdownTable(
      ['table or index', 'partition key', 'write units', 'share of all write units'],
      heat.partitions.map(row),
      [false, false, true, true],
    ),
    '',
    'The busiest partition of the table and of each index:',
    '',
    markdownTable(
      ['table or index', 'partition key', 'write units', 'share of all write units'],
      heat.busiestByTarget.map(row),
      [false, false, true, true],
    ),
    '',
    `${heat.requests.toLocaleString('en-US')} requests (${[...heat.requestsByLabel].map(([label, n]) => `${label} ${n}`).join(', ')}) ` +
      `by ${heat.clients} client identities logged in with an SDK's body, and the admin, on the 2,000-policy network, ` +
      "a round a minute on the controller's clock (clients polling once a minute: each API session refreshed once a round); " +
      `${units(heat.totalUnits)} write units in all. A partition is the table's partition key of an item written, or ` +
      "an index's partition key of an entry written there; the units of a single-item write are DynamoDB Local's, a " +
      "transaction's are worked out per item (`write-model.ts`). On AWS a partition takes at most 1,000 write units a " +
      "second, so the busiest one's share bounds the request rate: 1,000 / (its units per request).",
  ].join('\n');
}

/** Creates and updates at each size of their type. */
export function entityScaleReport(rows: readonly EntityScaleRow[]): string {
  return [
    '### Writes by the size of their type',
    '',
    operationsTable(
      rows.map(({ type, size, label, figures }) => ({
        label: `${type}, ${size.toLocaleString('en-US')}: ${label}`,
        figures,
      })),
    ),
    '',
    'On a table of its own; each type is seeded to the size in the row (its first 100 one create at a time, the rest ' +
      "in bulk: each document built by its API's create, the items its transaction puts written in batches), then " +
      'creates are measured, then updates of the entities those creates made.',
  ].join('\n');
}

export function bundlesTable(bundles: readonly BundleFigures[]): string {
  return markdownTable(
    [
      'function',
      'cold-start bytes',
      'gzip',
      'all files',
      'source maps',
      'cold import ms',
      'cold import ms, --enable-source-maps',
      'cold import ms, in Lambda (tracer)',
    ],
    bundles.map((bundle) => [
      bundle.functionName,
      `${bundle.bytes.toLocaleString('en-US')} (${kib(bundle.bytes)})`,
      `${bundle.gzipBytes.toLocaleString('en-US')} (${kib(bundle.gzipBytes)})`,
      kib(bundle.totalBytes),
      kib(bundle.sourceMapBytes),
      ms(bundle.coldImportMs),
      ms(bundle.coldImportWithSourceMapsMs),
      ms(bundle.coldImportTracedMs),
    ]),
    [false, true, true, true, true, true, true, true],
  );
}
