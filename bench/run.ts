import { ensureTable } from '#local/create-table.ts';
import { startDynamoDbLocal } from '#local/dynamodb-local.ts';
import { startLocalServer } from '#local/local-server.ts';
import { createServerCertificate } from '#local/tls-certificate.ts';
import { bootstrap } from '#shared/bootstrap.ts';
import { loadConfig } from '#shared/config.ts';
import { createDeps, type Deps } from '#shared/deps.ts';
import { identities } from '#shared/entities/identity.ts';
import { createLogger } from '#shared/log/logger.ts';
import { count } from '#shared/store/index-queries.ts';
import {
  apiSessionBench,
  LOGIN_TRIES,
  type LoginTimingFigures,
  SESSION_OWNERS,
  type SessionListFigures,
} from './api-session-bench.ts';
import { type BenchClient, createBenchClient } from './bench-client.ts';
import { countDynamoDbRequests, type DynamoDbRequestCounter } from './count-dynamodb-requests.ts';
import { identityScenarios } from './identity-scenarios.ts';
import { machineFacts } from './machine-facts.ts';
import { markdownTable } from './markdown-table.ts';
import { type BundleFigures, measureBundles } from './measure-bundles.ts';
import { type MeasureOptions, measureOperation, type OperationFigures } from './measure-operation.ts';
import { percentile } from './percentile.ts';
import { ROLE_ATTRIBUTES, seededName, seedIdentities } from './seed-identities.ts';

const SIZES = [1_000, 10_000] as const;
const SAMPLE_INDEX = 123;
const ADMIN_USERNAME = 'admin';
const ADMIN_PASSWORD = 'bench-admin-password';
const MEASURE: MeasureOptions = { warmUp: 3, warmUpMs: 1_000, maxIterations: 100, minIterations: 10, budgetMs: 8_000 };
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

async function login(client: BenchClient): Promise<string> {
  const response = await client.call('POST', '/edge/management/v1/authenticate?method=password', {
    body: { username: ADMIN_USERNAME, password: ADMIN_PASSWORD },
  });
  const token = (response.body as { data?: { token?: string } } | undefined)?.data?.token;
  if (response.status !== 200 || !token) throw new Error(`login failed: ${response.status} ${response.text}`);
  return token;
}

/** Measures every identity scenario at one table size and prints its table. */
async function measureSize(
  deps: Deps,
  client: BenchClient,
  counter: DynamoDbRequestCounter,
  context: { token: string; adminId: string; size: number; jitWarmUpMs: number },
): Promise<void> {
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
  const rows: { label: string; figures: OperationFigures }[] = [];
  for (const scenario of scenarios) {
    progress(`  ${scenario.label}`);
    const figures = await measureOperation(() => scenario.run(), counter, MEASURE);
    rows.push({ label: scenario.label, figures });
  }
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
    const config = { ...loadConfig({}), tableName: 'bench', dynamoDbEndpoint: dynamo.endpoint };
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
    const token = await login(client);

    let seeded = 0;
    for (const size of SIZES) {
      const missing = size - (await count(deps.store, identities.collection));
      progress(`seeding ${missing.toLocaleString('en-US')} identities through the store (to ${size} in all)`);
      const seedStarted = performance.now();
      await seedIdentities(deps, seeded, seeded + missing);
      seeded += missing;
      const seconds = ((performance.now() - seedStarted) / 1000).toFixed(1);
      progress(`seeded in ${seconds} s; measuring at ${size}`);
      const jitWarmUpMs = size === SIZES[0] ? JIT_WARM_UP_MS : 0;
      await measureSize(deps, client, counter, { token, adminId: adminIdentityId, size, jitWarmUpMs });
    }
    progress('API sessions, on a table of their own');
    const sessionFigures = await apiSessionBench({
      dynamoDbEndpoint: dynamo.endpoint,
      tls,
      measure: MEASURE,
      adminUsername: ADMIN_USERNAME,
      adminPassword: ADMIN_PASSWORD,
      progress: (message) => progress(`  ${message}`),
    });
    print(sessionListReport(sessionFigures.list));
    print(loginTimingReport(sessionFigures.login));
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
