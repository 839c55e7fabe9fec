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
import { apiSessionBench, type SessionBenchOptions } from './api-session-bench.ts';
import { type BenchClient, createBenchClient } from './bench-client.ts';
import { benchConfig } from './bench-config.ts';
import { type BenchMeter, createBenchMeter } from './bench-meter.ts';
import { capacityCheck, capacityCheckReport } from './capacity-check.ts';
import { collectionScenarios } from './collection-scenarios.ts';
import { dialBench, dialReport } from './dial-bench.ts';
import { entityScaleBench } from './entity-scale-bench.ts';
import { fleetBillBench } from './fleet-bill-bench.ts';
import { fleetBillReport } from './fleet-bill-report.ts';
import { emptyGoalFigures, type GoalFigures, goalsReport } from './goals-report.ts';
import {
  currentApiSessionScenario,
  identityScenarios,
  listScenario,
  login,
  type Scenario,
  sdkLoginScenario,
} from './identity-scenarios.ts';
import { INTEGRITY_ITEMS, integrityBench } from './integrity-bench.ts';
import { loginFactorsBench } from './login-factors-bench.ts';
import { machineFacts } from './machine-facts.ts';
import { measureBundles } from './measure-bundles.ts';
import { type MeasureOptions, measureOperation, type OperationFigures } from './measure-operation.ts';
import { operationsTable } from './operations-table.ts';
import { pkiBench } from './pki-bench.ts';
import { policyBench } from './policy-bench.ts';
import {
  bundlesTable,
  type ContainsRow,
  containsReport,
  costNote,
  entityScaleReport,
  heatReport,
  integrityReport,
  loginFactorsReport,
  loginTimingReport,
  pkiReport,
  policyReport,
  policyStepsReport,
  sessionListReport,
} from './reports.ts';
import { type SeededCollection, seedEntities, seededEdgeRouters, seededServices } from './seed-entities.ts';
import { ROLE_ATTRIBUTES, seededName, seedIdentities } from './seed-identities.ts';
import { seedIdentitiesInBulk } from './seed-identities-in-bulk.ts';

/** The identities the SDK login and the plain authenticated request are first measured at, before `SIZES`. */
const FEW_IDENTITIES = 30;
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

/**
 * The parts of the bench, each runnable alone: `BENCH_ONLY=policies` (or several, `BENCH_ONLY=pki,logins`), or named
 * as arguments (`npm run bench -- bill`). Without either every part runs; `large` runs when `BENCH_LARGE=1` too.
 */
const SECTIONS = [
  'capacity',
  'bill',
  'pki',
  'dial',
  'integrity',
  'logins',
  'identities',
  'policies',
  'scale',
  'large',
  'bundles',
] as const;
type Section = (typeof SECTIONS)[number];

function selectedSections(): ReadonlySet<Section> {
  const only = [process.env.BENCH_ONLY ?? '', ...process.argv.slice(2)]
    .join(',')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of only) {
    if (!(SECTIONS as readonly string[]).includes(name)) {
      throw new Error(`unknown bench part "${name}" (one or more of ${SECTIONS.join(', ')})`);
    }
  }
  const chosen = new Set<Section>(only.length > 0 ? (only as Section[]) : SECTIONS.filter((name) => name !== 'large'));
  if (process.env.BENCH_LARGE === '1' && (only.length === 0 || chosen.has('identities'))) chosen.add('large');
  return chosen;
}

const started = performance.now();

function progress(message: string): void {
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)} s] ${message}\n`);
}

function print(text: string): void {
  process.stdout.write(`${text}\n\n`);
}

type Row = { label: string; figures: OperationFigures };

/** Measures each scenario in turn, in its own row. */
async function measureScenarios(scenarios: readonly Scenario[], meter: BenchMeter): Promise<Row[]> {
  const rows: Row[] = [];
  for (const scenario of scenarios) {
    progress(`  ${scenario.label}`);
    const prepare = scenario.prepare?.bind(scenario);
    const figures = await measureOperation(() => scenario.run(), meter, MEASURE, prepare);
    rows.push({ label: scenario.label, figures });
  }
  return rows;
}

/** Seeds to `size` in all and reports how long it took and how fast it went; nothing it sends is counted. */
async function timedSeed(
  meter: BenchMeter,
  what: string,
  stored: number,
  size: number,
  seed: (from: number, to: number) => Promise<void>,
) {
  const missing = Math.max(0, size - stored);
  progress(`seeding ${missing.toLocaleString('en-US')} ${what} through the store (to ${size} in all)`);
  const seedStarted = performance.now();
  await meter.uncounted(() => seed(stored, stored + missing));
  const seconds = (performance.now() - seedStarted) / 1000;
  progress(`seeded in ${seconds.toFixed(1)} s (${Math.round(missing / seconds)}/s); measuring at ${size}`);
}

/** The main table: its deps, meters, server and client, and the admin's session. */
interface MainTable {
  readonly deps: Deps;
  readonly meter: BenchMeter;
  readonly client: BenchClient;
  readonly token: string;
  readonly adminId: string;
  /** The next index `seedIdentities` has not used (names are unique by index). */
  readonly seeded: { next: number };
}

/** Seeds `to - from` more identities at the next unused indexes, one create at a time or in bulk. */
function seedMore(table: MainTable, bulk = false) {
  return async (from: number, to: number) => {
    const start = table.seeded.next;
    table.seeded.next += to - from;
    const seed = bulk ? seedIdentitiesInBulk : seedIdentities;
    await seed(table.deps, start, start + to - from);
  };
}

/** Measures every identity scenario at one table size, prints its table and returns its rows. */
async function measureSize(table: MainTable, size: number, jitWarmUpMs: number): Promise<Row[]> {
  const { deps, client, meter } = table;
  const sampleName = seededName(SAMPLE_INDEX);
  const sampleId = await meter.uncounted(() => deps.store.findIdByUnique(identities, 'name', sampleName));
  if (!sampleId) throw new Error(`${sampleName} was not seeded`);
  const scenarios = identityScenarios({
    client,
    token: table.token,
    adminUsername: ADMIN_USERNAME,
    adminPassword: ADMIN_PASSWORD,
    adminId: table.adminId,
    sampleId,
    sampleName,
    size,
  });
  const reads = scenarios.filter((scenario) => !scenario.writes);
  const warming = performance.now();
  if (jitWarmUpMs > 0) progress(`  warming up for ${jitWarmUpMs / 1000} s`);
  await meter.uncounted(async () => {
    while (performance.now() - warming < jitWarmUpMs) {
      for (const scenario of reads) await scenario.run();
    }
  });
  const rows = await measureScenarios(scenarios, meter);
  const sessions = await meter.uncounted(() => count(deps.store, 'api-sessions'));
  print(
    [
      `### ${size.toLocaleString('en-US')} identities`,
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
  table: MainTable,
  api: EntityApi<D, C, R, P>,
  collection: SeededCollection<C>,
): Promise<void> {
  const { deps, client, token, meter } = table;
  const rows: Row[] = [];
  for (const size of SIZES) {
    const stored = await meter.uncounted(() => count(deps.store, api.def.collection));
    await timedSeed(meter, collection.plural, stored, size, (from, to) =>
      seedEntities(deps, api, collection, from, to),
    );
    const scenarios = collectionScenarios({ client, token, size }, collection, SAMPLE_INDEX);
    for (const row of await measureScenarios(scenarios, meter)) {
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

/**
 * Reading the identities' filter records straight from the store as the list does first (every record read, those
 * holding the needle sent back): no HTTP, no filtering.
 */
function measureRecordsRead(table: MainTable, options: MeasureOptions, needle: string): Promise<OperationFigures> {
  progress('  filter records alone');
  const read = async () => {
    await filterRecords(table.deps.store, identities.collection, [needle]);
  };
  return measureOperation(read, table.meter, options);
}

/** What the `name contains` rows look for: a sample identity's number. */
const CONTAINS_NEEDLE = seededName(SAMPLE_INDEX).slice(-6);

/** `name contains` over HTTP and the filter records read alone, at the size the table has now. */
async function measureContains(table: MainTable, size: number, options: MeasureOptions): Promise<ContainsRow> {
  const needle = CONTAINS_NEEDLE;
  const label = `list, filter \`name contains "${needle}"\``;
  const scenario = listScenario(table, label, { filter: `name contains "${needle}"` });
  progress(`  ${label}`);
  let list: OperationFigures | string;
  try {
    list = await measureOperation(() => scenario.run(), table.meter, options);
  } catch (error) {
    list = (error as Error).message.slice(0, 120);
  }
  return { size, list, recordsRead: await measureRecordsRead(table, options, needle) };
}

/** The SDK login and the plain authenticated request on a table of `FEW_IDENTITIES` identities (the admin's too). */
async function measureFew(table: MainTable, goals: GoalFigures): Promise<void> {
  const stored = await table.meter.uncounted(() => count(table.deps.store, identities.collection));
  await timedSeed(table.meter, 'identities', stored, FEW_IDENTITIES, seedMore(table));
  const rows = await measureScenarios(
    [
      sdkLoginScenario(table.client, ADMIN_USERNAME, ADMIN_PASSWORD),
      currentApiSessionScenario(table.client, table.token),
    ],
    table.meter,
  );
  goals.sdkLogin.set(FEW_IDENTITIES, rows[0]!.figures);
  print([`### ${FEW_IDENTITIES} identities`, '', operationsTable(rows)].join('\n'));
}

/** The main table's sections: identities at each size, services, edge routers, then what follows at the end. */
async function identitiesSection(table: MainTable, goals: GoalFigures): Promise<ContainsRow[]> {
  const containsRows: ContainsRow[] = [];
  await measureFew(table, goals);
  for (const size of SIZES) {
    const stored = await table.meter.uncounted(() => count(table.deps.store, identities.collection));
    await timedSeed(table.meter, 'identities', stored, size, seedMore(table));
    const jitWarmUpMs = size === SIZES[0] ? JIT_WARM_UP_MS : 0;
    const rows = await measureSize(table, size, jitWarmUpMs);
    const byLabel = (part: string) => rows.find((row) => row.label.includes(part))?.figures;
    const sdk = byLabel('envInfo');
    const create = byLabel('create identity');
    if (sdk) goals.sdkLogin.set(size, sdk);
    if (create) goals.identityCreates.set(size, create);
    if (size === SIZES.at(-1)) {
      const contains = byLabel('contains');
      const pointRead = rows.find((row) => row.label === 'retrieve identity')?.figures;
      goals.passwordLogin = rows.find((row) => row.label === 'password login')?.figures;
      goals.authenticatedRequest = byLabel('current-api-session');
      if (contains && pointRead) {
        goals.contains = { list: contains, pointRead };
        const recordsRead = await measureRecordsRead(table, MEASURE, CONTAINS_NEEDLE);
        containsRows.push({ size, list: contains, recordsRead, pointRead });
      }
    }
  }
  return containsRows;
}

/** Stands up DynamoDB Local and the HTTPS server, runs the chosen sections, and tears everything down. */
async function measureApi(sections: ReadonlySet<Section>, goals: GoalFigures): Promise<void> {
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

    progress('request units: DynamoDB Local against AWS');
    print(capacityCheckReport(await capacityCheck(dynamo.endpoint)));
    print(costNote());
    if ([...sections].every((section) => section === 'capacity' || section === 'bundles')) return;

    const config = benchConfig('bench', dynamo.endpoint);
    const deps: Deps = { ...createDeps(config), logger: createLogger({}, { write: () => undefined }) };
    cleanups.push(() => deps.store.db.destroy());
    const meter = createBenchMeter(deps);
    await ensureTable(deps.store.db, config.tableName);
    const { adminIdentityId } = await bootstrap(deps, { adminUsername: ADMIN_USERNAME, adminPassword: ADMIN_PASSWORD });
    if (!adminIdentityId) throw new Error('bootstrap did not create the admin');

    const tls = await createServerCertificate();
    const server = await startLocalServer({ deps, tls, port: 0, invokeAs: meter.timeHandler });
    cleanups.push(() => server.close());
    meter.timeServer(server.server);
    const client = createBenchClient(`https://127.0.0.1:${server.port}`, tls.cert);
    cleanups.push(() => client.close());
    const token = await login(client, ADMIN_USERNAME, ADMIN_PASSWORD);
    const table: MainTable = { deps, meter, client, token, adminId: adminIdentityId, seeded: { next: 0 } };

    // What the benches on tables of their own need.
    const tableBench: SessionBenchOptions = {
      dynamoDbEndpoint: dynamo.endpoint,
      tls,
      measure: MEASURE,
      adminUsername: ADMIN_USERNAME,
      adminPassword: ADMIN_PASSWORD,
      progress: (message) => progress(`  ${message}`),
    };
    if (sections.has('bill')) {
      progress("a fleet's requests, on a table of their own");
      print(fleetBillReport(await fleetBillBench(tableBench)));
    }
    if (sections.has('pki')) {
      progress('enrollment and certificate login, on a table of their own');
      const rows = await pkiBench(tableBench);
      goals.certLogin = rows.find((row) => row.label.startsWith('cert login'))?.figures;
      print(pkiReport(rows));
    }
    if (sections.has('dial')) {
      progress("a router's dials, on a table of their own");
      print(dialReport(await dialBench(tableBench)));
    }
    if (sections.has('integrity')) {
      progress('integrity check, on a table of its own');
      const sizes = process.env.BENCH_LARGE === '1' ? INTEGRITY_ITEMS : INTEGRITY_ITEMS.slice(0, 1);
      print(integrityReport(await integrityBench(tableBench, sizes)));
    }
    if (sections.has('logins')) {
      progress('logins with second factors, on a table of their own');
      print(loginFactorsReport(await loginFactorsBench(tableBench)));
    }
    let containsRows: ContainsRow[] = [];
    const large = { size: LARGE_SIZE, measured: false, asked: sections.has('large') };
    if (sections.has('identities')) {
      containsRows = await identitiesSection(table, goals);
      print(containsReport(containsRows, CONTAINS_TARGET_MS, large));
      progress('services');
      await measureCollection(table, serviceApi, seededServices);
      progress('edge routers');
      await measureCollection(table, edgeRouterApi, seededEdgeRouters);
      progress('API sessions, on a table of their own');
      const sessionFigures = await apiSessionBench(tableBench);
      print(sessionListReport(sessionFigures.list));
      print(loginTimingReport(sessionFigures.login));
    }
    if (sections.has('policies')) {
      progress('policies, on a table of their own');
      const policies = await policyBench(tableBench);
      print(policyReport(policies.rows));
      print(policyStepsReport(policies.steps));
      print(heatReport(policies.heat));
      for (const step of policies.steps) {
        if (typeof step.figures === 'string') continue;
        const series = step.label.includes('GET /services') ? goals.clientServices : goals.freshDial;
        series.set(step.policies, step.figures);
      }
      if (typeof policies.heat !== 'string') goals.heat = policies.heat;
    }
    if (sections.has('scale')) {
      progress('creates and updates by the size of their type, on a table of their own');
      const rows = await entityScaleBench(tableBench);
      goals.entityScale = rows;
      print(entityScaleReport(rows));
    }
    if (sections.has('large')) {
      const stored = await meter.uncounted(() => count(deps.store, identities.collection));
      await timedSeed(meter, 'identities', stored, LARGE_SIZE, seedMore(table, true));
      containsRows.push(await measureContains(table, LARGE_SIZE, LARGE_MEASURE));
      large.measured = true;
      print(containsReport(containsRows, CONTAINS_TARGET_MS, large));
    }
  } finally {
    await cleanUp();
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
  }
}

async function main(): Promise<void> {
  const sections = selectedSections();
  print(
    [
      '## Benchmark figures (`npm run bench`)',
      '',
      `Measured ${new Date().toISOString().slice(0, 10)} on:`,
      ...machineFacts(),
      '',
      `Parts: ${[...sections].join(', ')}.`,
      '',
      [
        'The figures come from DynamoDB Local on loopback, with the local HTTPS server calling the same group',
        'handlers the Lambdas run: absolute latencies differ from AWS (a network round trip per DynamoDB request,',
        'Lambda CPU, API Gateway), the DynamoDB requests, waves and request units per operation carry over.',
        'Login throttling is on as deployed (its limits raised above what the bench reaches: they decide refusals,',
        'not what counting an attempt costs).',
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
  const goals = emptyGoalFigures();
  await measureApi(sections, goals);
  if (sections.has('bundles')) {
    progress('bundling the functions and timing cold imports');
    const { bundles, sdk } = await measureBundles(COLD_IMPORT_RUNS);
    goals.bundles = bundles;
    print(
      [
        '### Function bundles',
        '',
        bundlesTable(bundles),
        '',
        'Bundled with the esbuild options of cdk/function-bundle.ts (ESM, node24, minified, names kept, source maps ' +
          'without sources, split at every `await import()`, the AWS SDK left to the runtime). Cold-start bytes: ' +
          '`index.mjs` and the chunks it imports statically; all files: with the chunks only some operations load. ' +
          `Cold import: the median of ${COLD_IMPORT_RUNS} fresh \`node\` processes each timing ` +
          '`await import(bundle)`, which imports the AWS SDK from `node_modules/@aws-sdk` beside the bundle as Lambda ' +
          'does from its runtime; plain, with `--enable-source-maps` (which the functions run with), and with ' +
          "Lambda's `AWS_EXECUTION_ENV` set, where the X-Ray tracer loads too, alternating; process start-up is not " +
          `included. Of each cold import, the runtime's DynamoDB clients alone (\`@aws-sdk/client-dynamodb\` and ` +
          `\`lib-dynamodb\`, imported the same way) take ${sdk.coldImportMs.toFixed(1)} ms.`,
      ].join('\n'),
    );
  }
  print(goalsReport(goals));
  progress('done');
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
