import { createDeps } from '#functions/create-deps.ts';
import { edgeRouterApi } from '#functions/routers/edge-router-api.ts';
import { serviceApi } from '#functions/services/service-api.ts';
import { ensureTable } from '#local/create-table.ts';
import { startDynamoDbLocal } from '#local/dynamodb-local.ts';
import { startLocalServer } from '#local/local-server.ts';
import { createServerCertificate } from '#local/tls-certificate.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import type { BaseDocument } from '#shared/entities/entity-definition.ts';
import { identities } from '#shared/entities/identity.ts';
import { createLogger } from '#shared/log/logger.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { count, filterRecords } from '#shared/store/index-queries.ts';
import {
  apiSessionBench,
  LOGIN_TRIES,
  type LoginTimingFigures,
  SESSION_OWNERS,
  type SessionBenchOptions,
  type SessionListFigures,
} from './api-session-bench.ts';
import { type BenchClient, createBenchClient } from './bench-client.ts';
import { benchConfig } from './bench-config.ts';
import { collectionScenarios } from './collection-scenarios.ts';
import { countDynamoDbRequests, type DynamoDbRequestCounter } from './count-dynamodb-requests.ts';
import { identityScenarios, listScenario, login, type Scenario } from './identity-scenarios.ts';
import { INTEGRITY_ITEMS, type IntegrityRow, integrityBench } from './integrity-bench.ts';
import { type LoginFactorRow, loginFactorsBench } from './login-factors-bench.ts';
import { machineFacts } from './machine-facts.ts';
import { markdownTable } from './markdown-table.ts';
import { type BundleFigures, measureBundles } from './measure-bundles.ts';
import { type MeasureOptions, measureOperation, type OperationFigures } from './measure-operation.ts';
import { percentile } from './percentile.ts';
import { type PkiRow, pkiBench } from './pki-bench.ts';
import { POLICY_NETWORK, type PolicyRow, policyBench } from './policy-bench.ts';
import { type SeededCollection, seedEntities, seededEdgeRouters, seededServices } from './seed-entities.ts';
import { ROLE_ATTRIBUTES, seededName, seedIdentities } from './seed-identities.ts';
import { seedIdentitiesInBulk } from './seed-identities-in-bulk.ts';

const SIZES = [1_000, 10_000] as const;
/** The identities a filter that pins nothing is measured at besides the last of `SIZES`; only with `BENCH_LARGE=1`. */
const LARGE_SIZE = 100_000;
/** p50 targets of `name contains` on identities, by table size. */
const CONTAINS_TARGET_MS: Readonly<Record<number, number>> = { 10000: 150, 100000: 1_000 };
const SAMPLE_INDEX = 123;
const ADMIN_USERNAME = 'admin';
const ADMIN_PASSWORD = 'bench-admin-password';
const MEASURE: MeasureOptions = { warmUp: 3, warmUpMs: 1_000, maxIterations: 100, minIterations: 10, budgetMs: 8_000 };
/** Each run at 100,000 identities takes seconds: a few runs, one unmeasured. */
const LARGE_MEASURE: MeasureOptions = { warmUp: 1, warmUpMs: 0, maxIterations: 5, minIterations: 3, budgetMs: 0 };
const COLD_IMPORT_RUNS = 7;
/** Read scenarios cycled before the first size is measured: DynamoDB Local's JIT is still cold after 1,000 seeds. */
const JIT_WARM_UP_MS = 20_000;

const started = performance.now();

function progress(message: string): void {
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)} s] ${message}\n`);
}

function print(text: string): void {
  process.stdout.write(`${text}\n\n`);
}

const ms = (value: number) => value.toFixed(1);
const perOp = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2));
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

function byOperation(figures: OperationFigures): string {
  return [...figures.requestsByOperation]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([operation, count]) => `${operation} ${perOp(count)}`)
    .join(', ');
}

function operationsTable(rows: readonly { label: string; figures: OperationFigures }[]): string {
  return markdownTable(
    ['operation', 'n', 'p50 ms', 'p95 ms', 'DynamoDB requests/op', 'by DynamoDB operation'],
    rows.map(({ label, figures }) => [
      label,
      String(figures.iterations),
      ms(figures.p50Ms),
      ms(figures.p95Ms),
      perOp(figures.requestsPerOp),
      byOperation(figures),
    ]),
    [false, true, true, true, true, false],
  );
}

function bundlesTable(bundles: readonly BundleFigures[]): string {
  return markdownTable(
    ['function', 'bytes', 'gzip', 'source map', 'cold import ms', 'cold import ms, --enable-source-maps'],
    bundles.map((bundle) => [
      bundle.functionName,
      `${bundle.bytes.toLocaleString('en-US')} (${kib(bundle.bytes)})`,
      `${bundle.gzipBytes.toLocaleString('en-US')} (${kib(bundle.gzipBytes)})`,
      kib(bundle.sourceMapBytes),
      ms(bundle.coldImportMs),
      ms(bundle.coldImportWithSourceMapsMs),
    ]),
    [false, true, true, true, true, true],
  );
}

type Row = { label: string; figures: OperationFigures };

/** Measures each scenario in turn, in its own row. */
async function measureScenarios(scenarios: readonly Scenario[], counter: DynamoDbRequestCounter): Promise<Row[]> {
  const rows: Row[] = [];
  for (const scenario of scenarios) {
    progress(`  ${scenario.label}`);
    const figures = await measureOperation(() => scenario.run(), counter, MEASURE);
    rows.push({ label: scenario.label, figures });
  }
  return rows;
}

/** Seeds to `size` in all and reports how long it took and how fast it went. */
async function timedSeed(
  what: string,
  stored: number,
  size: number,
  seed: (from: number, to: number) => Promise<void>,
) {
  const missing = Math.max(0, size - stored);
  progress(`seeding ${missing.toLocaleString('en-US')} ${what} through the store (to ${size} in all)`);
  const seedStarted = performance.now();
  await seed(stored, stored + missing);
  const seconds = (performance.now() - seedStarted) / 1000;
  progress(`seeded in ${seconds.toFixed(1)} s (${Math.round(missing / seconds)}/s); measuring at ${size}`);
}

/** Measures every identity scenario at one table size, prints its table and returns its rows. */
async function measureSize(
  deps: Deps,
  client: BenchClient,
  counter: DynamoDbRequestCounter,
  context: { token: string; adminId: string; size: number; jitWarmUpMs: number },
): Promise<Row[]> {
  const sampleName = seededName(SAMPLE_INDEX);
  const sampleId = await deps.store.findIdByUnique(identities, 'name', sampleName);
  if (!sampleId) throw new Error(`${sampleName} was not seeded`);
  const scenarios = identityScenarios({
    client,
    token: context.token,
    adminUsername: ADMIN_USERNAME,
    adminPassword: ADMIN_PASSWORD,
    adminId: context.adminId,
    sampleId,
    sampleName,
    size: context.size,
  });
  const reads = scenarios.filter((scenario) => !scenario.writes);
  const warming = performance.now();
  if (context.jitWarmUpMs > 0) progress(`  warming up for ${context.jitWarmUpMs / 1000} s`);
  while (performance.now() - warming < context.jitWarmUpMs) {
    for (const scenario of reads) await scenario.run();
  }
  const rows = await measureScenarios(scenarios, counter);
  const sessions = await count(deps.store, 'api-sessions');
  print(
    [
      `### ${context.size.toLocaleString('en-US')} identities`,
      '',
      operationsTable(rows),
      '',
      `${sessions.toLocaleString('en-US')} API sessions were stored (the admin's, one per login above) at the end.`,
    ].join('\n'),
  );
  return rows;
}

/** Create and list of one seeded collection at each of `SIZES`, in one table. */
async function measureCollection<D extends BaseDocument, C extends object, R, P>(
  deps: Deps,
  client: BenchClient,
  counter: DynamoDbRequestCounter,
  token: string,
  api: EntityApi<D, C, R, P>,
  collection: SeededCollection<C>,
): Promise<void> {
  const rows: Row[] = [];
  for (const size of SIZES) {
    const stored = await count(deps.store, api.def.collection);
    await timedSeed(collection.plural, stored, size, (from, to) => seedEntities(deps, api, collection, from, to));
    const scenarios = collectionScenarios({ client, token, size }, collection, SAMPLE_INDEX);
    for (const row of await measureScenarios(scenarios, counter)) {
      rows.push({ label: `${size.toLocaleString('en-US')}: ${row.label}`, figures: row.figures });
    }
  }
  print(
    [
      `### ${collection.plural[0]!.toUpperCase()}${collection.plural.slice(1)} (\`${collection.path}\`)`,
      '',
      operationsTable(rows),
      '',
      `Each row starts with the ${collection.plural} seeded before it was measured (its size's creates add a few).`,
    ].join('\n'),
  );
}

/** The list's figures, or why it has none (at 100,000 identities it can outlast the function timeout). */
type ContainsRow = { size: number; list: OperationFigures | string; recordsRead: OperationFigures };

/** Reading every identity's filter record straight from the store, as the list does first: no HTTP, no filtering. */
function measureRecordsRead(
  deps: Deps,
  counter: DynamoDbRequestCounter,
  options: MeasureOptions,
): Promise<OperationFigures> {
  progress('  filter records alone');
  const read = async () => {
    await filterRecords(deps.store, identities.collection);
  };
  return measureOperation(read, counter, options);
}

/** `name contains` over HTTP and the filter records read alone, at the size the table has now. */
async function measureContains(
  deps: Deps,
  client: BenchClient,
  counter: DynamoDbRequestCounter,
  context: { token: string; size: number; options: MeasureOptions },
): Promise<ContainsRow> {
  const needle = seededName(SAMPLE_INDEX).slice(-6);
  const label = `list, filter \`name contains "${needle}"\``;
  const scenario = listScenario({ client, token: context.token }, label, { filter: `name contains "${needle}"` });
  progress(`  ${label}`);
  let list: OperationFigures | string;
  try {
    list = await measureOperation(() => scenario.run(), counter, context.options);
  } catch (error) {
    list = (error as Error).message.slice(0, 120);
  }
  return { size: context.size, list, recordsRead: await measureRecordsRead(deps, counter, context.options) };
}

/** `name contains` on identities (a filter that pins nothing) at each size, against its p50 target. */
function containsReport(rows: readonly ContainsRow[]): string {
  return [
    '### A filter that pins nothing: identities, `name contains`',
    '',
    markdownTable(
      [
        'identities',
        'n',
        'p50 ms',
        'p95 ms',
        'DynamoDB requests/op',
        'by DynamoDB operation',
        'p50 target ms',
        'filter records read alone, p50 / p95 ms',
      ],
      rows.map(({ size, list, recordsRead }) => {
        const target = CONTAINS_TARGET_MS[size] ?? Number.NaN;
        const met = typeof list !== 'string' && list.p50Ms <= target;
        const figures =
          typeof list === 'string'
            ? ['', `failed: ${list}`, '', '', '']
            : [String(list.iterations), ms(list.p50Ms), ms(list.p95Ms), perOp(list.requestsPerOp), byOperation(list)];
        return [
          size.toLocaleString('en-US'),
          ...figures,
          `${target} (${met ? 'met' : 'missed'})`,
          `${ms(recordsRead.p50Ms)} / ${ms(recordsRead.p95Ms)}`,
        ];
      }),
      [false, true, true, true, true, false, true, true],
    ),
    '',
    'The last column times `filterRecords` called on the store directly (the parallel key-range queries and the ' +
      "SDK's unmarshalling): the rest of a list's time is the HTTP round trip, parsing the filter, filtering and " +
      "sorting the records in memory, and reading and rendering the page's entities.",
    '',
    rows.some((row) => row.size === LARGE_SIZE)
      ? `The identities were topped up to ${LARGE_SIZE.toLocaleString('en-US')} after every other table, the items ` +
        "each create's transaction writes put in batches (`seed-identities-in-bulk.ts`)."
      : process.env.BENCH_LARGE === '1'
        ? `${LARGE_SIZE.toLocaleString('en-US')} identities follow at the end.`
        : `Set \`BENCH_LARGE=1\` to measure it at ${LARGE_SIZE.toLocaleString('en-US')} identities too, at the end.`,
  ].join('\n');
}

/** The API-session list page at each stored count, and how its cost grows (it should not). */
function sessionListReport(figures: readonly SessionListFigures[]): string {
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
function integrityReport(rows: readonly IntegrityRow[]): string {
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
function loginFactorsReport(rows: readonly LoginFactorRow[]): string {
  const fetches = rows
    .filter((row) => row.jwksFetchesPerLogin !== undefined)
    .map((row) => `${row.label}: ${perOp(row.jwksFetchesPerLogin ?? 0)} JWKS fetches per login`);
  return ['### Logins with second factors', '', operationsTable(rows), '', ...fetches].join('\n');
}

function pkiReport(rows: readonly PkiRow[]): string {
  const signs = rows.map((row) => `${row.label}: ${perOp(row.signsPerOp)} signatures (KMS \`Sign\` calls) per run`);
  return ['### Enrollment and certificate login', '', operationsTable(rows), '', ...signs].join('\n');
}

/** Failed logins: a known username with a wrong password against an unknown username. */
function loginTimingReport(figures: LoginTimingFigures): string {
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
function policyReport(rows: readonly PolicyRow[]): string {
  const n = POLICY_NETWORK;
  return [
    '### Policies',
    '',
    markdownTable(
      [
        'operation',
        'n',
        'p50 ms',
        'p95 ms',
        'DynamoDB requests/op',
        'sequential waves/op',
        'by DynamoDB operation',
        'p50 target ms',
      ],
      rows.map(({ label, figures, targetMs }) => {
        const target =
          targetMs === undefined
            ? ''
            : `${targetMs} (${typeof figures !== 'string' && figures.p50Ms <= targetMs ? 'met' : 'missed'})`;
        return typeof figures === 'string'
          ? [label, '', `failed: ${figures}`, '', '', '', '', target]
          : [
              label,
              String(figures.iterations),
              ms(figures.p50Ms),
              ms(figures.p95Ms),
              perOp(figures.requestsPerOp),
              perOp(figures.wavesPerOp),
              byOperation(figures),
              target,
            ];
      }),
      [false, true, true, true, true, true, false, true],
    ),
    '',
    `On a table of their own: ${n.identities.toLocaleString('en-US')} identities, ${n.services.toLocaleString('en-US')} ` +
      `services, ${n.edgeRouters} edge routers and ${n.servicePolicies + n.edgeRouterPolicies + n.serviceEdgeRouterPolicies} ` +
      `policies (${n.servicePolicies} service, ${n.edgeRouterPolicies} edge router, ${n.serviceEdgeRouterPolicies} ` +
      'service edge router; one side in twenty `#all`, one in four one to three `@ids`, the rest one or two attributes; ' +
      'AllOf and AnyOf alternating). The client is a non-admin identity with the attributes `eng` and `emea`. A wave is ' +
      'a run of DynamoDB requests in flight together; the waves of a request are its sequential round trips.',
  ].join('\n');
}

/** Stands up DynamoDB Local and the HTTPS server, seeds and measures each size, and tears everything down. */
async function measureApi(): Promise<void> {
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        progress(`clean-up failed: ${(error as Error).message}`);
      }
    }
  };
  const interrupted = (signal: NodeJS.Signals) => {
    progress(`${signal}: stopping`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    progress('starting DynamoDB Local (in memory)');
    const dynamo = await startDynamoDbLocal();
    cleanups.push(() => dynamo.stop());
    const config = benchConfig('bench', dynamo.endpoint);
    const deps: Deps = { ...createDeps(config), logger: createLogger({}, { write: () => undefined }) };
    cleanups.push(() => deps.store.db.destroy());
    const counter = countDynamoDbRequests(deps.store.db);
    await ensureTable(deps.store.db, config.tableName);
    const { adminIdentityId } = await bootstrap(deps, { adminUsername: ADMIN_USERNAME, adminPassword: ADMIN_PASSWORD });
    if (!adminIdentityId) throw new Error('bootstrap did not create the admin');

    const tls = await createServerCertificate();
    const server = await startLocalServer({ deps, tls, port: 0 });
    cleanups.push(() => server.close());
    const client = createBenchClient(`https://127.0.0.1:${server.port}`, tls.cert);
    cleanups.push(() => client.close());
    const token = await login(client, ADMIN_USERNAME, ADMIN_PASSWORD);

    // `BENCH_ONLY=policies` (or `logins`) measures that scenario alone (while working on it).
    const policiesOnly = process.env.BENCH_ONLY === 'policies';
    const loginsOnly = process.env.BENCH_ONLY === 'logins';
    const integrityOnly = process.env.BENCH_ONLY === 'integrity';
    const pkiOnly = process.env.BENCH_ONLY === 'pki';
    // What the benches on tables of their own need.
    const tableBench: SessionBenchOptions = {
      dynamoDbEndpoint: dynamo.endpoint,
      tls,
      measure: MEASURE,
      adminUsername: ADMIN_USERNAME,
      adminPassword: ADMIN_PASSWORD,
      progress: (message) => progress(`  ${message}`),
    };
    if (pkiOnly || !process.env.BENCH_ONLY) {
      progress('enrollment and certificate login, on a table of their own');
      print(pkiReport(await pkiBench(tableBench)));
    }
    if (integrityOnly || !process.env.BENCH_ONLY) {
      progress('integrity check, on a table of its own');
      const sizes = process.env.BENCH_LARGE === '1' ? INTEGRITY_ITEMS : INTEGRITY_ITEMS.slice(0, 1);
      print(integrityReport(await integrityBench(tableBench, sizes)));
    }
    let seeded = 0;
    const containsRows: ContainsRow[] = [];
    if (!policiesOnly && !integrityOnly && !pkiOnly) {
      progress('logins with second factors, on a table of their own');
      print(loginFactorsReport(await loginFactorsBench(tableBench)));
    }
    if (!policiesOnly && !loginsOnly && !integrityOnly && !pkiOnly) {
      for (const size of SIZES) {
        const stored = await count(deps.store, identities.collection);
        await timedSeed('identities', stored, size, (from, to) => seedIdentities(deps, seeded, seeded + to - from));
        seeded += Math.max(0, size - stored);
        const jitWarmUpMs = size === SIZES[0] ? JIT_WARM_UP_MS : 0;
        const rows = await measureSize(deps, client, counter, { token, adminId: adminIdentityId, size, jitWarmUpMs });
        const contains = rows.find((row) => row.label.includes('contains'));
        if (contains && size === SIZES.at(-1)) {
          const recordsRead = await measureRecordsRead(deps, counter, MEASURE);
          containsRows.push({ size, list: contains.figures, recordsRead });
        }
      }
      print(containsReport(containsRows));
      progress('services');
      await measureCollection(deps, client, counter, token, serviceApi, seededServices);
      progress('edge routers');
      await measureCollection(deps, client, counter, token, edgeRouterApi, seededEdgeRouters);
      progress('API sessions, on a table of their own');
      const sessionFigures = await apiSessionBench(tableBench);
      print(sessionListReport(sessionFigures.list));
      print(loginTimingReport(sessionFigures.login));
    }
    if (!loginsOnly && !integrityOnly && !pkiOnly) {
      progress('policies, on a table of their own');
      print(policyReport(await policyBench(tableBench)));
    }
    if (process.env.BENCH_LARGE === '1' && !policiesOnly && !loginsOnly && !integrityOnly && !pkiOnly) {
      const stored = await count(deps.store, identities.collection);
      await timedSeed('identities', stored, LARGE_SIZE, (from, to) =>
        seedIdentitiesInBulk(deps, seeded, seeded + to - from),
      );
      containsRows.push(
        await measureContains(deps, client, counter, { token, size: LARGE_SIZE, options: LARGE_MEASURE }),
      );
      print(containsReport(containsRows));
    }
  } finally {
    await cleanUp();
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
  }
}

async function main(): Promise<void> {
  print(
    [
      '## Benchmark figures (`npm run bench`)',
      '',
      `Measured ${new Date().toISOString().slice(0, 10)} on:`,
      ...machineFacts(),
      '',
      [
        'The figures come from DynamoDB Local on loopback, with the local HTTPS server calling the same group',
        'handlers the Lambdas run: absolute latencies differ from AWS (a network round trip per DynamoDB request,',
        'Lambda CPU, API Gateway), the DynamoDB requests per operation carry over.',
        'Requests are sequential over one kept-alive HTTPS connection. Before the first size the read operations',
        `are cycled for ${JIT_WARM_UP_MS / 1000} s (DynamoDB Local's JIT is cold after 1,000 seeds); each row then`,
        `warms up (${MEASURE.warmUp} runs and ${MEASURE.warmUpMs / 1000} s at least) and makes up to`,
        `${MEASURE.maxIterations} runs or ${MEASURE.budgetMs / 1000} s of runs (at least ${MEASURE.minIterations});`,
        'p50/p95 are nearest-rank over the n runs.',
        'Identities are seeded through the store (the transaction a create writes, 16 in flight), not the API;',
        'one in three has tags, one in fifty is an admin, each has one or two of the role attributes',
        `${ROLE_ATTRIBUTES.map((attribute) => `\`${attribute}\``).join(', ')}.`,
        "Services and edge routers are seeded the same way, each document built by its API's own create from a",
        'varied body (role attributes as above, some tags; edge routers do not tunnel).',
      ].join(' '),
    ].join('\n'),
  );
  await measureApi();
  progress('bundling the functions and timing cold imports');
  print(
    [
      '### Function bundles',
      '',
      bundlesTable(await measureBundles(COLD_IMPORT_RUNS)),
      '',
      'Bundled with the esbuild options of cdk/controller-function.ts (ESM, node24, minified, names kept, source map ' +
        `without sources). Cold import: the median of ${COLD_IMPORT_RUNS} fresh \`node\` processes each timing ` +
        '`await import(bundle)`, with and without `--enable-source-maps` (which the functions run with) alternating; ' +
        'process start-up is not included.',
    ].join('\n'),
  );
  progress('done');
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
