import { totalUnits } from './capacity-tally.ts';
import { type CostPerMillion, costPerMillion } from './cost-per-million.ts';
import type { EntityScaleRow } from './entity-scale-bench.ts';
import { markdownTable } from './markdown-table.ts';
import type { BundleFigures } from './measure-bundles.ts';
import type { OperationFigures } from './measure-operation.ts';
import { dollars, ms, perOp, units } from './operations-table.ts';
import type { PartitionHeat } from './policy-bench.ts';

/** The figures the issue's goals are stated in, gathered from the sections that ran. */
export interface GoalFigures {
  /** Management password login, throttling on as deployed, at the largest identity size. */
  passwordLogin?: OperationFigures;
  /** Client password login with the SDK's body, by identities stored. */
  readonly sdkLogin: Map<number, OperationFigures>;
  certLogin?: OperationFigures;
  /** `GET /current-api-session`, at the largest identity size. */
  authenticatedRequest?: OperationFigures;
  /** Client `GET /services` (limit 10) and a fresh Dial, by policies stored. */
  readonly clientServices: Map<number, OperationFigures>;
  readonly freshDial: Map<number, OperationFigures>;
  /** Identity creates by identities stored. */
  readonly identityCreates: Map<number, OperationFigures>;
  entityScale?: readonly EntityScaleRow[];
  /** `name contains` over 10,000 identities through the API, and a point read (retrieve identity) at the same size. */
  contains?: { readonly list: OperationFigures; readonly pointRead: OperationFigures };
  heat?: PartitionHeat;
  bundles?: readonly BundleFigures[];
}

export function emptyGoalFigures(): GoalFigures {
  return {
    sdkLogin: new Map(),
    clientServices: new Map(),
    freshDial: new Map(),
    identityCreates: new Map(),
  };
}

const arrow = (values: readonly string[]) => values.join(' → ');
const count = (value: number) => value.toLocaleString('en-US');

/** `a → b → c`: one figure over the sizes of a series, smallest first. */
function values(figures: ReadonlyMap<number, OperationFigures>, pick: (figures: OperationFigures) => string): string {
  const sizes = [...figures.keys()].sort((a, b) => a - b);
  return arrow(sizes.map((size) => pick(figures.get(size)!)));
}

/** `at 1,000 → 10,000 <what>`: the sizes of a series. */
function sizesOf(figures: ReadonlyMap<number, OperationFigures>, what: string): string {
  return `at ${arrow([...figures.keys()].sort((a, b) => a - b).map(count))} ${what}`;
}

/** `<name> a → b → c` for each figure, then the sizes once. */
function series(
  figures: ReadonlyMap<number, OperationFigures>,
  what: string,
  picks: readonly (readonly [string, (figures: OperationFigures) => string])[],
): string {
  return `${picks.map(([name, pick]) => `${name} ${values(figures, pick)}`).join('; ')} ${sizesOf(figures, what)}`;
}

const WAVES = ['waves', (f: OperationFigures) => perOp(f.wavesPerOp)] as const;
const REQUESTS = ['requests', (f: OperationFigures) => perOp(f.requestsPerOp)] as const;
const RRU = ['RRU', (f: OperationFigures) => units(f.readUnitsPerOp)] as const;
const WRU = ['WRU', (f: OperationFigures) => units(f.writeUnitsPerOp)] as const;
const P50 = ['p50 ms', (f: OperationFigures) => ms(f.p50Ms)] as const;

function ratio(figures: ReadonlyMap<number, OperationFigures>, pick: (figures: OperationFigures) => number): string {
  const sizes = [...figures.keys()].sort((a, b) => a - b);
  const first = figures.get(sizes[0]!);
  const last = figures.get(sizes.at(-1)!);
  if (!first || !last || sizes.length < 2) return '';
  const value = pick(first) === 0 ? Number.NaN : pick(last) / pick(first);
  return ` (WRU ${value.toFixed(2)}× from first to last)`;
}

function shape(figures: OperationFigures): string {
  return `${perOp(figures.wavesPerOp)} waves, ${perOp(figures.requestsPerOp)} requests`;
}

/** A KB for the bundles' goal: 1,000 bytes, as "300 KB minified" is meant. */
const kb = (bytes: number) => `${(bytes / 1000).toFixed(0)} KB`;

/** The goals table: each goal with today's figure as measured in this run. */
function goalRows(goals: GoalFigures): string[][] {
  const rows: string[][] = [];
  if (goals.passwordLogin) {
    const login = goals.passwordLogin;
    rows.push([
      'password login as deployed (throttling on)',
      `${shape(login)}, ${perOp(login.kmsPerOp)} KMS; RRU ${units(login.readUnitsPerOp)}, WRU ${units(login.writeUnitsPerOp)}`,
      '≤3 waves, 0 KMS',
    ]);
  }
  if (goals.certLogin) {
    const login = goals.certLogin;
    rows.push([
      'certificate login',
      `${shape(login)}, ${perOp(login.kmsPerOp)} KMS; RRU ${units(login.readUnitsPerOp)}, WRU ${units(login.writeUnitsPerOp)}`,
      '≤2 waves',
    ]);
  }
  if (goals.authenticatedRequest) {
    const request = goals.authenticatedRequest;
    const write = request.capacityPerOp.write;
    rows.push([
      'any authenticated request (`GET /current-api-session`, which reads nothing more)',
      `${shape(request)} (all of them before the operation); RRU ${units(request.readUnitsPerOp)}, ` +
        `WRU ${units(totalUnits(write))} (${[...write].map(([target, value]) => `${target} ${units(value)}`).join(', ')})`,
      '≤1 read before the operation, ≤1 WRU on average',
    ]);
  }
  if (goals.clientServices.size > 0) {
    rows.push([
      'client `GET /services` (limit 10)',
      series(goals.clientServices, 'policies', [WAVES, REQUESTS, RRU]),
      '≤4 waves; RRU grows with the page, not the policies',
    ]);
  }
  if (goals.freshDial.size > 0) {
    rows.push([
      'client `POST /sessions` (a fresh Dial)',
      series(goals.freshDial, 'policies', [WAVES, REQUESTS, RRU, WRU]),
      '≤4 waves, flat',
    ]);
  }
  if (goals.identityCreates.size > 0) {
    rows.push([
      'create an identity',
      `${series(goals.identityCreates, 'identities', [WRU, P50])}${ratio(goals.identityCreates, (f) => f.writeUnitsPerOp)}`,
      'flat (≤1.1× from 1k to 40k)',
    ]);
  }
  for (const [type, operation] of entityScaleSeries(goals.entityScale ?? [])) {
    const { label, bySize } = operation;
    rows.push([
      `${label.split(' (')[0]} ${type}`,
      `${series(bySize, type, [WRU, P50])}${ratio(bySize, (f) => f.writeUnitsPerOp)}`,
      'flat (≤1.1× from 1k to 40k)',
    ]);
  }
  if (goals.sdkLogin.size > 0) {
    rows.push([
      'login with the `envInfo`/`sdkInfo` SDKs send',
      `${series(goals.sdkLogin, 'identities', [WRU])}${ratio(goals.sdkLogin, (f) => f.writeUnitsPerOp)}`,
      'flat',
    ]);
  }
  if (goals.contains) {
    const { list, pointRead } = goals.contains;
    rows.push([
      'list filter pinning nothing (`name contains`), 10,000 identities, through the API',
      `p50 ${ms(list.p50Ms)} ms, ${(list.p50Ms / pointRead.p50Ms).toFixed(1)}× a point read (${ms(pointRead.p50Ms)} ms); ` +
        `RRU ${units(list.readUnitsPerOp)}`,
      '≤150 ms, ≤15×',
    ]);
  }
  if (goals.heat) {
    const busiest = goals.heat.partitions[0];
    rows.push([
      'partition heat (mixed authenticated requests)',
      busiest
        ? `busiest: ${busiest.target} \`${busiest.partition}\`, ${(busiest.share * 100).toFixed(1)}% of write units`
        : 'no writes',
      'printed',
    ]);
  }
  if (goals.bundles && goals.bundles.length > 0) {
    const largest = [...goals.bundles].sort((a, b) => b.bytes - a.bytes)[0]!;
    const slowest = [...goals.bundles].sort((a, b) => b.coldImportMs - a.coldImportMs)[0]!;
    rows.push([
      'bundles (minified) and cold import, per function',
      `largest ${largest.functionName} ${kb(largest.bytes)}; slowest import ${slowest.functionName} ${ms(slowest.coldImportMs)} ms`,
      '≤300 KB, ≤50 ms',
    ]);
  }
  return rows;
}

/** The entity-scale rows as one series per type and operation. */
function entityScaleSeries(rows: readonly EntityScaleRow[]) {
  const byKey = new Map<string, { label: string; bySize: Map<number, OperationFigures> }>();
  for (const row of rows) {
    if (typeof row.figures === 'string') continue;
    const key = `${row.type}\u0000${row.label}`;
    const entry = byKey.get(key) ?? { label: row.label, bySize: new Map<number, OperationFigures>() };
    entry.bySize.set(row.size, row.figures);
    byKey.set(key, entry);
  }
  return [...byKey].map(([key, entry]) => [key.split('\u0000')[0]!, entry] as const);
}

/** Cost per million of the four operations the issue sets money goals for. */
function costRows(goals: GoalFigures): string[][] {
  const middle = (figures: ReadonlyMap<number, OperationFigures>) => {
    const sizes = [...figures.keys()].sort((a, b) => a - b);
    const size = sizes[Math.floor(sizes.length / 2)];
    return size === undefined ? undefined : { size, figures: figures.get(size)! };
  };
  const largest = (figures: ReadonlyMap<number, OperationFigures>) => {
    const size = Math.max(...figures.keys());
    return Number.isFinite(size) ? { size, figures: figures.get(size)! } : undefined;
  };
  const candidates: [string, OperationFigures | undefined, number][] = [];
  const sdk = largest(goals.sdkLogin);
  candidates.push(['password login, management API (as deployed)', goals.passwordLogin, 2.5]);
  candidates.push([
    `password login, client API, SDK body${sdk ? ` (${count(sdk.size)} identities)` : ''}`,
    sdk?.figures,
    2.5,
  ]);
  candidates.push(['certificate login', goals.certLogin, 2.5]);
  const services = middle(goals.clientServices);
  candidates.push([
    `client \`GET /services\`, limit 10${services ? ` (${count(services.size)} policies)` : ''}`,
    services?.figures,
    1.0,
  ]);
  candidates.push(['authenticated request (`GET /current-api-session`)', goals.authenticatedRequest, 0.75]);
  const dial = middle(goals.freshDial);
  candidates.push([
    `client \`POST /sessions\`, a fresh Dial${dial ? ` (${count(dial.size)} policies)` : ''}`,
    dial?.figures,
    2.0,
  ]);
  return candidates.flatMap(([label, figures, goal]) => {
    if (!figures) return [];
    const cost: CostPerMillion = costPerMillion(figures);
    return [
      [
        label,
        units(figures.readUnitsPerOp),
        units(figures.writeUnitsPerOp),
        perOp(figures.invocationsPerOp),
        ms(figures.billedMsPerOp),
        dollars(cost.dynamoDb),
        dollars(cost.lambda),
        dollars(cost.backend),
        dollars(cost.allIn),
        `≤${dollars(goal)} (${cost.backend <= goal ? 'met' : 'missed'})`,
      ],
    ];
  });
}

export function goalsReport(goals: GoalFigures): string {
  const goalTable = goalRows(goals);
  const costs = costRows(goals);
  return [
    '### Goals: today, as measured',
    '',
    goalTable.length > 0
      ? markdownTable(['goal', 'today (this run)', 'goal'], goalTable)
      : 'No section that measures a goal ran.',
    '',
    '### Cost per million requests',
    '',
    costs.length > 0
      ? markdownTable(
          [
            'operation',
            'RRU',
            'WRU',
            'invocations',
            'billed ms',
            'DynamoDB $/M',
            'Lambda $/M',
            'backend $/M',
            'all-in $/M',
            'backend goal',
          ],
          costs,
          [false, true, true, true, true, true, true, true, true, false],
        )
      : 'No section that measures these ran.',
  ].join('\n');
}
