import { SystemLogLevel } from 'aws-cdk-lib/aws-lambda';
import { SYSTEM_LOG_LEVEL } from '../cdk/controller-function.ts';
import { DEFAULT_REQUEST_LOG_SAMPLE_RATE } from '../cdk/controller-settings.ts';
import { AWS_PRICES, FLEET_PRICES } from './aws-prices.ts';
import { type CpuAndWaves, lambdaPerMillion } from './lambda-memory.ts';

/**
 * A fleet's monthly bill: the requests the OpenZiti C SDK's timers send per device, priced per request from what the
 * bench measures of each (request units, CPU time and waves), under each front door and DynamoDB capacity mode, plus
 * what the stack costs whatever the traffic. Pure arithmetic: `fleet-bill-bench.ts` measures, this prices.
 */

/** The requests a fleet sends, each from one function. */
export type FleetRequest = 'poll' | 'refresh' | 'login' | 'serviceList' | 'dial';

/** One kind of request of an enrolled device: how often it comes and which function answers it. */
export interface FleetRequestKind {
  readonly request: FleetRequest;
  readonly label: string;
  readonly perDeviceDay: number;
  readonly functionName: 'client' | 'authentication' | 'sessions';
}

/**
 * The C SDK (`ziti-prox-c`, `refresh_interval` 60 s): a poll a minute; its API session refreshed every 20 minutes
 * (at 1/2 to 5/6 of a 30-minute lifetime); one login, one full service list and ten Dial sessions a day. Posture
 * responses (a 20 s timer, only where services have posture checks) are left out.
 */
export const C_SDK_DAY: readonly FleetRequestKind[] = [
  {
    request: 'poll',
    label: 'poll, `GET /current-api-session/service-updates`',
    perDeviceDay: 24 * 60,
    functionName: 'client',
  },
  {
    request: 'refresh',
    label: 'session refresh, `GET /current-api-session`',
    perDeviceDay: (24 * 60) / 20,
    functionName: 'authentication',
  },
  { request: 'login', label: 'certificate login', perDeviceDay: 1, functionName: 'authentication' },
  { request: 'serviceList', label: 'service list, `GET /services`', perDeviceDay: 1, functionName: 'client' },
  { request: 'dial', label: 'Dial session, `POST /sessions`', perDeviceDay: 10, functionName: 'sessions' },
];

/** Requests are counted over a 30-day month; hourly resources bill `FLEET_PRICES.hoursPerMonth`. */
export const DAYS_PER_MONTH = 30;
const SECONDS_PER_MONTH = DAYS_PER_MONTH * 24 * 3600;

/** What the bench measured of one kind of request. */
export interface MeasuredRequest extends CpuAndWaves {
  readonly readUnits: number;
  readonly writeUnits: number;
  /** The bytes the handlers log for one such request on AWS, sampling applied ({@link loggedBytesPerRequest}). */
  readonly logBytes: number;
}

export type FrontDoor = 'rest' | 'alb';
export type CapacityMode = 'on-demand' | 'provisioned';

/** What the stack costs a month whatever its traffic, counted from `cdk/` (the item, its count, its monthly price). */
export interface FixedItem {
  readonly item: string;
  readonly count: number;
  readonly monthly: number;
}

/**
 * The stack's fixed monthly items: KMS keys (2 CA signing keys, and the server key's, the stored secrets', the logs'
 * and the admin password's encryption keys: `controller-keys.ts`), the 2 secrets (server key, admin password), the
 * alarms (`controller-monitoring.ts`: 2 per function for 13 functions, and 6 of the API, table, WAF, integrity and
 * KMS), the web ACL with its 5 rules (`controller-firewall.ts`).
 */
export const FIXED_ITEMS: readonly FixedItem[] = [
  { item: 'KMS keys', count: 6, monthly: AWS_PRICES.kms.keyMonth },
  { item: 'Secrets Manager secrets', count: 2, monthly: FLEET_PRICES.secretsManager.secretMonth },
  { item: 'CloudWatch alarms', count: 32, monthly: FLEET_PRICES.cloudWatch.alarmMonth },
  { item: 'WAF web ACL', count: 1, monthly: FLEET_PRICES.waf.webAclMonth },
  { item: 'WAF rules', count: 5, monthly: FLEET_PRICES.waf.ruleMonth },
];

/** Assumptions about the traffic that the bench cannot measure, stated with the bill. */
export const FLEET_ASSUMPTIONS = {
  /**
   * Bytes through the load balancer per request: a TLS handshake with the device's certificate chain (an SDK's
   * connection does not outlive the load balancer's 60 s idle timeout between polls), the request and the answer.
   */
  bytesPerRequest: 6_000,
  /** New connections per request at the load balancer (one each, as above). */
  newConnectionsPerRequest: 1,
  /** Listener rules the load balancer evaluates per request (within the 10 free). */
  rulesPerRequest: 1,
  /**
   * Bytes a deployed function's log line has beyond the same line printed locally: its function name and ARN are
   * longer (`ZitiController-prod-ClientFunction…`) and the X-Ray trace id is added.
   */
  deployedLineExtraBytes: 150,
  /**
   * Lambda's own JSON lines of an invocation (`platform.start`, `platform.runtimeDone`, `platform.report` with its
   * X-Ray fields), when the system log level lets them through: INFO or DEBUG, not the stack's WARN.
   */
  platformLogBytesPerInvocation: 900,
  /** Provisioned capacity is kept by auto scaling at this utilisation of what it provisions (AWS's default). */
  autoScalingTargetUtilisation: 0.7,
} as const;

/** The month of one fleet under one front door and capacity mode, by part; `total` is their sum. */
export interface FleetMonth {
  readonly devices: number;
  readonly frontDoor: FrontDoor;
  readonly capacity: CapacityMode;
  readonly requests: number;
  readonly frontDoorCost: number;
  readonly waf: number;
  readonly lambda: number;
  readonly dynamoDb: number;
  readonly logs: number;
  readonly fixed: number;
  readonly total: number;
}

/** The requests of each kind a fleet of `devices` sends in a month. */
export function monthlyRequests(
  devices: number,
  day: readonly FleetRequestKind[] = C_SDK_DAY,
): Map<FleetRequest, number> {
  return new Map(day.map((kind) => [kind.request, kind.perDeviceDay * DAYS_PER_MONTH * devices]));
}

/** API Gateway REST requests priced by their monthly tiers. */
export function restApiMonth(requests: number): number {
  let cost = 0;
  let from = 0;
  for (const tier of FLEET_PRICES.apiGateway.restTiers) {
    const to = tier.upToMillions * 1_000_000;
    const inTier = Math.max(0, Math.min(requests, to) - from);
    cost += (inTier / 1_000_000) * tier.perMillion;
    from = to;
    if (requests <= to) break;
  }
  return cost;
}

/** The load balancer capacity units an hour needs: those of the dimension that needs most. */
export function loadBalancerCapacityUnits(requests: number, devices: number): number {
  const { lcu } = FLEET_PRICES.alb;
  const perSecond = requests / SECONDS_PER_MONTH;
  const newConnections = (perSecond * FLEET_ASSUMPTIONS.newConnectionsPerRequest) / lcu.newConnectionsPerSecond;
  const activeConnections = devices / lcu.activeConnectionsPerMinute;
  const gbPerHour = (perSecond * 3600 * FLEET_ASSUMPTIONS.bytesPerRequest) / 1e9 / lcu.gbPerHour;
  const paidRules = Math.max(0, FLEET_ASSUMPTIONS.rulesPerRequest - lcu.freeRules);
  const ruleEvaluations = (perSecond * paidRules) / lcu.ruleEvaluationsPerSecond;
  return Math.max(newConnections, activeConnections, gbPerHour, ruleEvaluations);
}

/** The load balancer's month: its hours and its capacity units. */
export function loadBalancerMonth(requests: number, devices: number): number {
  const { hour, lcuHour } = FLEET_PRICES.alb;
  return FLEET_PRICES.hoursPerMonth * (hour + lcuHour * loadBalancerCapacityUnits(requests, devices));
}

/**
 * DynamoDB's month for these units. On demand: each unit at its price. Provisioned: the month's average units a
 * second, over auto scaling's target utilisation, at the unit-hour price (a steady fleet: polls spread evenly; an
 * empty table still provisions a unit of each for the table and its 3 indexes).
 */
export function dynamoDbMonth(readUnits: number, writeUnits: number, capacity: CapacityMode): number {
  if (capacity === 'on-demand') {
    return (readUnits * AWS_PRICES.dynamoDb.readRequestUnit + writeUnits * AWS_PRICES.dynamoDb.writeRequestUnit) / 1e6;
  }
  const { readCapacityUnitHour, writeCapacityUnitHour } = FLEET_PRICES.dynamoDbProvisioned;
  const provisioned = (units: number) =>
    Math.max(4, units / SECONDS_PER_MONTH / FLEET_ASSUMPTIONS.autoScalingTargetUtilisation);
  return (
    FLEET_PRICES.hoursPerMonth *
    (provisioned(readUnits) * readCapacityUnitHour + provisioned(writeUnits) * writeCapacityUnitHour)
  );
}

/** What the fixed items cost a month. */
export function fixedMonth(items: readonly FixedItem[] = FIXED_ITEMS): number {
  return items.reduce((sum, item) => sum + item.count * item.monthly, 0);
}

/** The month of a fleet: every part from its requests, the measured figures and the chosen memory per function. */
export function fleetMonth(
  devices: number,
  frontDoor: FrontDoor,
  capacity: CapacityMode,
  measured: ReadonlyMap<string, MeasuredRequest>,
  memoryMb: (functionName: FleetRequestKind['functionName']) => number,
  day: readonly FleetRequestKind[] = C_SDK_DAY,
): FleetMonth {
  const byKind = monthlyRequests(devices, day);
  let requests = 0;
  let lambda = 0;
  let readUnits = 0;
  let writeUnits = 0;
  for (const kind of day) {
    const count = byKind.get(kind.request) ?? 0;
    const figures = measured.get(kind.request);
    if (!figures) throw new Error(`no figures measured for ${kind.request}`);
    requests += count;
    lambda += (count / 1e6) * lambdaPerMillion(figures, memoryMb(kind.functionName));
    readUnits += count * figures.readUnits;
    writeUnits += count * figures.writeUnits;
  }
  const frontDoorCost = frontDoor === 'rest' ? restApiMonth(requests) : loadBalancerMonth(requests, devices);
  const waf = (requests / 1e6) * FLEET_PRICES.waf.perMillionRequests;
  const dynamoDb = dynamoDbMonth(readUnits, writeUnits, capacity);
  const logs = (logBytesOf(byKind, measured, day) / 1e9) * FLEET_PRICES.cloudWatch.logsIngestedGb;
  const fixed = fixedMonth();
  return {
    devices,
    frontDoor,
    capacity,
    requests,
    frontDoorCost,
    waf,
    lambda,
    dynamoDb,
    logs,
    fixed,
    total: frontDoorCost + waf + lambda + dynamoDb + logs + fixed,
  };
}

/** A network with no traffic: the fixed items, and under the load balancer its hours (on-demand DynamoDB: nothing). */
export function idleMonth(frontDoor: FrontDoor): number {
  return fixedMonth() + (frontDoor === 'alb' ? FLEET_PRICES.hoursPerMonth * FLEET_PRICES.alb.hour : 0);
}

/** Whether Lambda writes its START, END and REPORT lines at the stack's system log level (`controller-function.ts`). */
export const PLATFORM_LINES_LOGGED = SYSTEM_LOG_LEVEL !== SystemLogLevel.WARN;

/**
 * The bytes one request's lines cost on AWS, from the lines the handlers printed for `requests` of them with every
 * line written (`npm start`'s sampling): a summary line that sampling would leave out (it says `sampleRate`) counts
 * `1 / sampleRate` of itself, as the stack samples ({@link DEFAULT_REQUEST_LOG_SAMPLE_RATE}, and its `sampleRate`
 * says so); every other line counts whole. Each line gets what a deployed function's context adds.
 */
export function loggedBytesPerRequest(
  lines: readonly string[],
  requests: number,
  sampleRate: number = DEFAULT_REQUEST_LOG_SAMPLE_RATE,
): number {
  let bytes = 0;
  for (const line of lines) {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    const sampled = typeof parsed.sampleRate === 'number';
    const printed = sampled ? JSON.stringify({ ...parsed, sampleRate }) : line;
    bytes += (Buffer.byteLength(printed) + FLEET_ASSUMPTIONS.deployedLineExtraBytes) / (sampled ? sampleRate : 1);
  }
  return bytes / requests;
}

/** The log bytes a month of these requests ingests: the handlers' lines, and Lambda's where its level lets them by. */
function logBytesOf(
  byKind: ReadonlyMap<FleetRequest, number>,
  measured: ReadonlyMap<string, MeasuredRequest>,
  day: readonly FleetRequestKind[],
): number {
  const platform = PLATFORM_LINES_LOGGED ? FLEET_ASSUMPTIONS.platformLogBytesPerInvocation : 0;
  return day.reduce(
    (sum, kind) => sum + (byKind.get(kind.request) ?? 0) * ((measured.get(kind.request)?.logBytes ?? 0) + platform),
    0,
  );
}
