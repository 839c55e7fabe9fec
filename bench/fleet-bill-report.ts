import { DEFAULT_REQUEST_LOG_SAMPLE_RATE } from '../cdk/controller-settings.ts';
import { functionMemoryMb } from '../cdk/function-memory.ts';
import { AWS_PRICES, FLEET_PRICES } from './aws-prices.ts';
import { dynamoDbOnDemandPerMillion } from './dynamodb-on-demand.ts';
import {
  C_SDK_DAY,
  C_SDK_OIDC_DAY,
  type CapacityMode,
  DAYS_PER_MONTH,
  type Door,
  FLEET_ASSUMPTIONS,
  type FleetMonth,
  type FleetRequest,
  type FleetRequestKind,
  fixedItems,
  fixedMonth,
  fleetMonth,
  idleMonth,
  type MeasuredRequest,
  OIDC_CERT_LOGIN_REQUESTS,
  OIDC_REFRESH_SECONDS,
  PLATFORM_LINES_LOGGED,
} from './fleet-bill.ts';
import type { FleetRow } from './fleet-bill-bench.ts';
import {
  cheapestMemory,
  DYNAMODB_WAVE_MS,
  FULL_VCPU_MB,
  LATENCY_CAP_MS,
  lambdaPerMillion,
  MEMORY_SIZES_MB,
  modelledMs,
} from './lambda-memory.ts';
import { markdownTable } from './markdown-table.ts';
import { byOperation, dollars, ms, perOp, units, unitsByKind } from './operations-table.ts';

/** The fleet sizes the bill is printed for. */
export const FLEET_SIZES = [100, 1_000, 10_000, 100_000] as const;

/** The backend goals per million of the issue: the poll, and any authenticated request with no touch due. */
const POLL_GOAL = 0.5;
const AUTHENTICATED_GOAL = 0.75;

/** The doors the month is priced for: the REST API behind its web ACL, the load balancer with it and without it. */
const DOORS: readonly { door: Door; label: string }[] = [
  { door: { frontDoor: 'rest', firewall: true }, label: 'REST API + WAF' },
  { door: { frontDoor: 'alb', firewall: true }, label: 'ALB + WAF' },
  { door: { frontDoor: 'alb', firewall: false }, label: 'ALB, no WAF' },
];

const labelOf = (month: Pick<FleetMonth, 'frontDoor' | 'firewall'>) =>
  DOORS.find(({ door }) => door.frontDoor === month.frontDoor && door.firewall === month.firewall)?.label ??
  month.frontDoor;
const CAPACITY: readonly CapacityMode[] = ['on-demand', 'provisioned'];

const count = (value: number) => Math.round(value).toLocaleString('en-US');

/** Every kind of request the bill prices: the legacy day's, then the OIDC day's. */
const ALL_KINDS: readonly FleetRequestKind[] = [...C_SDK_DAY, ...C_SDK_OIDC_DAY];

/**
 * What a request of each kind measured: a flow's run (an OIDC login's four requests) shared evenly among its
 * requests, each then priced as an invocation of its own. The Lambda duration is modelled on the mean request, so
 * rounding up to the ms is counted once a request on the mean, not on each of the four.
 */
function measuredOf(rows: readonly FleetRow[]): Map<FleetRequest | 'authenticated', MeasuredRequest> {
  return new Map(
    rows.map(({ request, figures, logBytes, requestsPerRun }): [FleetRequest | 'authenticated', MeasuredRequest] => [
      request,
      {
        readUnits: figures.readUnitsPerOp / requestsPerRun,
        writeUnits: figures.writeUnitsPerOp / requestsPerRun,
        cpuMsPerRequest: figures.cpuMsPerOp / requestsPerRun,
        wavesPerRequest: figures.wavesPerOp / requestsPerRun,
        logBytes: logBytes / requestsPerRun,
      },
    ]),
  );
}

/** Each request: how often, what it reads and writes, its CPU, and Lambda's $/M at each memory size. */
function requestsTable(rows: readonly FleetRow[]): string {
  const measured = measuredOf(rows);
  const body = ALL_KINDS.flatMap((kind) => {
    const figures = measured.get(kind.request);
    if (!figures) return [];
    const memory = functionMemoryMb(kind.functionName);
    const dynamo = dynamoDbOnDemandPerMillion(figures.readUnits, figures.writeUnits);
    const backend = dynamo + lambdaPerMillion(figures, memory);
    const goal = kind.request === 'poll' || kind.request === 'oidcPoll' ? POLL_GOAL : undefined;
    return [
      [
        kind.label,
        perOp(kind.perDeviceDay),
        perOp(figures.wavesPerRequest),
        units(figures.readUnits),
        units(figures.writeUnits),
        figures.cpuMsPerRequest.toFixed(2),
        ...MEMORY_SIZES_MB.map((size) => dollars(lambdaPerMillion(figures, size))),
        `${kind.functionName} ${memory}`,
        dollars(dynamo),
        dollars(backend),
        goal === undefined ? '' : `≤${dollars(goal)} (${backend <= goal ? 'met' : 'missed'})`,
      ],
    ];
  });
  return markdownTable(
    [
      'request',
      'per device a day',
      'waves',
      'RRU',
      'WRU',
      'CPU ms',
      ...MEMORY_SIZES_MB.map((size) => `Lambda $/M at ${size} MB`),
      'function, MB',
      'DynamoDB $/M (on demand)',
      'backend $/M',
      'backend goal',
    ],
    body,
    [false, true, true, true, true, true, true, true, true, false, true, true, false],
  );
}

/** The goal for any authenticated request, on `GET /current-api-session` with no touch due. */
function authenticatedLine(measured: ReadonlyMap<FleetRequest | 'authenticated', MeasuredRequest>): string {
  const figures = measured.get('authenticated');
  if (!figures) return '';
  const backend =
    dynamoDbOnDemandPerMillion(figures.readUnits, figures.writeUnits) +
    lambdaPerMillion(figures, functionMemoryMb('poll'));
  return (
    `Any authenticated request (\`GET /current-api-session\` with no touch due): ${perOp(figures.wavesPerRequest)} wave, ` +
    `RRU ${units(figures.readUnits)}, WRU ${units(figures.writeUnits)}, backend ${dollars(backend)}/M ` +
    `(goal ≤${dollars(AUTHENTICATED_GOAL)}: ${backend <= AUTHENTICATED_GOAL ? 'met' : 'missed'}).`
  );
}

/** Per function: the memory the measurement picks and the one `FUNCTION_MEMORY_MB` deploys. */
function memoryTable(rows: readonly FleetRow[]): string {
  const measured = measuredOf(rows);
  const functions = [...new Set(ALL_KINDS.map((kind) => kind.functionName))];
  const body = functions.map((name) => {
    const kinds = ALL_KINDS.filter((kind) => kind.functionName === name && measured.has(kind.request));
    const operations = kinds.map((kind) => ({ ...measured.get(kind.request)!, weight: kind.perDeviceDay }));
    const slowest = (size: number) => Math.max(...operations.map((operation) => modelledMs(operation, size)));
    return [
      name,
      kinds.map((kind) => kind.request).join(', '),
      ...MEMORY_SIZES_MB.map((size) => ms(slowest(size))),
      String(cheapestMemory(operations)),
      String(functionMemoryMb(name)),
    ];
  });
  return markdownTable(
    [
      'function',
      'fleet requests',
      ...MEMORY_SIZES_MB.map((size) => `slowest modelled ms at ${size} MB`),
      'measurement picks (MB)',
      'deployed (`FUNCTION_MEMORY_MB`)',
    ],
    body,
    [false, false, true, true, true, true, true],
  );
}

/** The month of each fleet size under each door and capacity mode, on one day's requests (the legacy C SDK's). */
export function billRows(
  measured: ReadonlyMap<FleetRequest | 'authenticated', MeasuredRequest>,
  day: readonly FleetRequestKind[] = C_SDK_DAY,
): FleetMonth[] {
  const memory = (name: FleetRequestKind['functionName']) => functionMemoryMb(name);
  return FLEET_SIZES.flatMap((devices) =>
    DOORS.flatMap(({ door }) => CAPACITY.map((mode) => fleetMonth(devices, door, mode, measured, memory, day))),
  );
}

const sameMonth = (a: FleetMonth, b: FleetMonth) =>
  a.devices === b.devices && a.frontDoor === b.frontDoor && a.firewall === b.firewall && a.capacity === b.capacity;

const signed = (value: number) => `${value < 0 ? '−' : '+'}${dollars(Math.abs(value))}`;

/** Each fleet size, door and capacity mode: the month on the legacy day, on the OIDC day, and the difference. */
function oidcMonthTable(legacy: readonly FleetMonth[], oidc: readonly FleetMonth[]): string {
  return markdownTable(
    [
      'devices',
      'front door',
      'DynamoDB',
      'requests a month, legacy',
      'requests a month, OIDC',
      'month, legacy',
      'month, OIDC',
      'difference',
      'difference %',
    ],
    legacy.map((before) => {
      const after = oidc.find((month) => sameMonth(month, before));
      if (!after) throw new Error('no OIDC month beside a legacy one');
      const difference = after.total - before.total;
      return [
        count(before.devices),
        labelOf(before),
        before.capacity,
        count(before.requests),
        count(after.requests),
        dollars(before.total),
        dollars(after.total),
        signed(difference),
        `${difference < 0 ? '−' : '+'}${((Math.abs(difference) / before.total) * 100).toFixed(1)}%`,
      ];
    }),
    [true, false, false, true, true, true, true, true, true],
  );
}

/**
 * Whether the fleet's month grows under OIDC (the condition: it must not), and where the difference is, by
 * part, at 10,000 devices on each door, on demand.
 */
function oidcVerdict(legacy: readonly FleetMonth[], oidc: readonly FleetMonth[]): string {
  const pairs = legacy.map((before) => ({ before, after: oidc.find((month) => sameMonth(month, before))! }));
  const grown = pairs.filter(({ before, after }) => after.total > before.total + 0.005);
  const largest = pairs.reduce((most, pair) =>
    pair.after.total - pair.before.total > most.after.total - most.before.total ? pair : most,
  );
  const parts = (['frontDoorCost', 'waf', 'lambda', 'dynamoDb', 'logs'] as const).map((part) => ({
    part,
    label: { frontDoorCost: 'front door', waf: 'WAF', lambda: 'Lambda', dynamoDb: 'DynamoDB', logs: 'logs' }[part],
  }));
  const at10k = pairs
    .filter(({ before }) => before.devices === 10_000 && before.capacity === 'on-demand')
    .map(
      ({ before, after }) =>
        `${labelOf(before)} ${signed(after.total - before.total)} (` +
        parts.map(({ part, label }) => `${label} ${signed(after[part] - before[part])}`).join(', ') +
        ')',
    );
  const verdict =
    grown.length === 0
      ? "**The fleet's month does not grow under OIDC** at any fleet size, door or capacity mode."
      : `**The fleet's month grows under OIDC** in ${grown.length} of ${pairs.length} cases, at most by ` +
        `${dollars(largest.after.total - largest.before.total)} a month ` +
        `(${(((largest.after.total - largest.before.total) / largest.before.total) * 100).toFixed(1)}%: ` +
        `${count(largest.before.devices)} devices, ${labelOf(largest.before)}, ${largest.before.capacity}).`;
  return `${verdict} At 10,000 devices on demand, by part: ${at10k.join('; ')}.`;
}

/** The whole OIDC login as measured, one run of its four requests. */
function oidcLoginLine(rows: readonly FleetRow[]): string {
  const row = rows.find((each) => each.request === 'oidcLogin');
  if (!row) return '';
  const { figures } = row;
  return (
    `The OIDC certificate login, measured whole (${OIDC_CERT_LOGIN_REQUESTS} requests a run, ` +
    `${perOp(figures.invocationsPerOp)} invocations): ${perOp(figures.wavesPerOp)} waves, RRU ` +
    `${units(figures.readUnitsPerOp)}, WRU ${units(figures.writeUnitsPerOp)}, CPU ${figures.cpuMsPerOp.toFixed(2)} ms, ` +
    `${perOp(figures.kmsPerOp)} KMS requests, p50 ${ms(figures.p50Ms)} ms; its row above is a quarter of it, priced ` +
    `${OIDC_CERT_LOGIN_REQUESTS} times a day as ${OIDC_CERT_LOGIN_REQUESTS} requests (invocations, front door and WAF ` +
    'requests), each request modelled at the mean CPU and waves of the four.'
  );
}

/** What the OIDC requests that write send to DynamoDB and which items their write units go to, a run each. */
function oidcWritesLine(rows: readonly FleetRow[]): string {
  const written = rows.filter((row) => row.request.startsWith('oidc') && row.figures.writeUnitsPerOp > 0);
  return (
    'What the OIDC requests that write send, a run each: ' +
    written
      .map(({ request, figures }) => `${request}: ${byOperation(figures)} (table WRU ${unitsByKind(figures)})`)
      .join('; ') +
    '.'
  );
}

/** The month's total per fleet size, a column per door and capacity mode. */
function monthTable(months: readonly FleetMonth[]): string {
  const columns = DOORS.flatMap(({ door, label }) =>
    CAPACITY.map((mode) => ({ door, mode, label: `${label}, ${mode}` })),
  );
  return markdownTable(
    ['devices', 'requests a month', ...columns.map((column) => column.label)],
    FLEET_SIZES.map((devices) => {
      const ofSize = months.filter((month) => month.devices === devices);
      return [
        count(devices),
        count(ofSize[0]?.requests ?? 0),
        ...columns.map(({ door, mode }) => {
          const month = ofSize.find(
            (each) => each.frontDoor === door.frontDoor && each.firewall === door.firewall && each.capacity === mode,
          );
          return month ? dollars(month.total) : '';
        }),
      ];
    }),
    [true, true, ...columns.map(() => true)],
  );
}

function billTable(months: readonly FleetMonth[]): string {
  return markdownTable(
    [
      'devices',
      'requests a month',
      'front door',
      'DynamoDB',
      'front door $',
      'WAF $',
      'Lambda $',
      'DynamoDB $',
      'logs $',
      'fixed $',
      'month $',
    ],
    months.map((month) => [
      count(month.devices),
      count(month.requests),
      labelOf(month),
      month.capacity,
      dollars(month.frontDoorCost),
      dollars(month.waf),
      dollars(month.lambda),
      dollars(month.dynamoDb),
      dollars(month.logs),
      dollars(month.fixed),
      dollars(month.total),
    ]),
    [true, true, false, false, true, true, true, true, true, true, true],
  );
}

/** What each request logs on AWS, measured: the handlers' lines with the stack's sampling, and Lambda's own. */
function logsLine(measured: ReadonlyMap<FleetRequest | 'authenticated', MeasuredRequest>): string {
  const perKind = ALL_KINDS.map((kind) => `${kind.request} ${Math.round(measured.get(kind.request)?.logBytes ?? 0)}`);
  const platform = PLATFORM_LINES_LOGGED
    ? `plus Lambda's START, END and REPORT lines (${FLEET_ASSUMPTIONS.platformLogBytesPerInvocation} bytes an invocation)`
    : `Lambda's START, END and REPORT lines left out (system log level WARN; they would add ` +
      `${FLEET_ASSUMPTIONS.platformLogBytesPerInvocation} bytes an invocation)`;
  return (
    `Logs: the bytes the handlers print per request, measured, one successful read in ` +
    `${DEFAULT_REQUEST_LOG_SAMPLE_RATE} logged as the stack deploys (failures, slow requests and writes all): ` +
    `${perKind.join(', ')}; ${platform}; at $${FLEET_PRICES.cloudWatch.logsIngestedGb} a GB ingested.`
  );
}

/** The bill section: the requests, the memory choice, the month per fleet, the idle month and what is assumed. */
export function fleetBillReport(rows: readonly FleetRow[]): string {
  const measured = measuredOf(rows);
  const months = billRows(measured);
  const oidcMonths = billRows(measured, C_SDK_OIDC_DAY);
  const workloadOf = (day: readonly FleetRequestKind[]) =>
    day.map((kind) => `${perOp(kind.perDeviceDay)} × ${kind.label}`).join('; ');
  const perDay = (day: readonly FleetRequestKind[]) => perOp(day.reduce((sum, kind) => sum + kind.perDeviceDay, 0));
  const idle = DOORS.map(({ door, label }) => {
    const items = fixedItems(door);
    const fixed = items.map((item) => `${item.count} ${item.item} × ${dollars(item.monthly)}`).join(', ');
    const hours = door.frontDoor === 'alb' ? `, and its ${FLEET_PRICES.hoursPerMonth} hours` : '';
    return `${label} ${dollars(idleMonth(door))} (${fixed}: ${dollars(fixedMonth(items))}${hours})`;
  }).join('; ');
  return [
    "### A fleet's monthly bill",
    '',
    `Workload per device a day (the C SDK's timers): ${workloadOf(C_SDK_DAY)}; a ${DAYS_PER_MONTH}-day month ` +
      `(${perDay(C_SDK_DAY)} requests a device a day).`,
    '',
    `Under OIDC (\`sdk-c library/oidc.c\`: the token refreshed between 1/2 and 5/6 of its life, every ` +
      `${OIDC_REFRESH_SECONDS / 60} minutes on average; no \`GET /current-api-session\`): ${workloadOf(C_SDK_OIDC_DAY)} ` +
      `(${perDay(C_SDK_OIDC_DAY)} requests a device a day).`,
    '',
    requestsTable(rows),
    '',
    oidcLoginLine(rows),
    '',
    oidcWritesLine(rows),
    '',
    `Lambda at each size: ${dollars(AWS_PRICES.lambda.requests)}/M requests plus the billed duration at ` +
      `$${AWS_PRICES.lambda.arm64GbSecond}/GB-s (arm64), the duration modelled as CPU ms × max(1, ${FULL_VCPU_MB} / MB) ` +
      `+ waves × ${DYNAMODB_WAVE_MS} ms, rounded up to the ms (\`bench/lambda-memory.ts\`).`,
    '',
    authenticatedLine(measured),
    '',
    memoryTable(rows),
    '',
    `The cheapest size wins among those under which no request of the function is modelled past ${LATENCY_CAP_MS} ms.`,
    '',
    monthTable(months),
    '',
    billTable(months),
    '',
    '#### The month under OIDC, beside the legacy one',
    '',
    oidcMonthTable(months, oidcMonths),
    '',
    oidcVerdict(months, oidcMonths),
    '',
    logsLine(measured),
    '',
    'Idle network (no traffic; on-demand DynamoDB, Lambda, API Gateway and logs cost nothing idle but for the ended ' +
      `sessions' sweep's runs, a fixed item), a month: ${idle}.`,
    '',
    `Assumed, not measured: ${FLEET_ASSUMPTIONS.bytesPerRequest.toLocaleString('en-US')} bytes and ` +
      `${FLEET_ASSUMPTIONS.newConnectionsPerRequest} new connection per request at the load balancer (the binding LCU ` +
      `dimension is the largest of new connections, active connections, processed bytes and rule evaluations), ` +
      `${FLEET_ASSUMPTIONS.deployedLineExtraBytes} bytes more per log line in Lambda than locally (a longer function ` +
      `name and ARN, the X-Ray trace id), provisioned capacity at ` +
      `${FLEET_ASSUMPTIONS.autoScalingTargetUtilisation * 100}% utilisation of a steady load. Prices of ` +
      `${FLEET_PRICES.asOf} and ${AWS_PRICES.asOf} (\`bench/aws-prices.ts\`).`,
  ].join('\n');
}
