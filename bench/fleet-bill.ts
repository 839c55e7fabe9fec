import { SystemLogLevel } from 'aws-cdk-lib/aws-lambda';
import { ROUTES } from '#shared/routes/route-table.ts';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import { SYSTEM_LOG_LEVEL } from '../cdk/controller-function.ts';
import { SESSION_SWEEP_INTERVAL } from '../cdk/controller-session-sweep.ts';
import { DEFAULT_REQUEST_LOG_SAMPLE_RATE } from '../cdk/controller-settings.ts';
import { functionMemoryMb } from '../cdk/function-memory.ts';
import { functionSources } from '../cdk/operation-groups.ts';
import { DEFAULT_ROUTER_ENDPOINT } from '../cdk/router-endpoint-settings.ts';
import { DEFAULT_PROVISIONED_CAPACITY } from '../cdk/table-capacity.ts';
import { AWS_PRICES, FLEET_PRICES, ROUTER_ENDPOINT_PRICES } from './aws-prices.ts';
import { dynamoDbOnDemandPerMillion } from './dynamodb-on-demand.ts';
import { type CpuAndWaves, lambdaPerMillion } from './lambda-memory.ts';

/**
 * A fleet's monthly bill: the requests the OpenZiti C SDK's timers send per device, priced per request from what the
 * bench measures of each (request units, CPU time and waves), under each front door and DynamoDB capacity mode, plus
 * what the stack costs whatever the traffic. Pure arithmetic: `fleet-bill-bench.ts` measures, this prices.
 */

/**
 * The requests a fleet sends, each from one function: the legacy API session's, and the same device's under OIDC
 * (`oidc…`: its access token as `Authorization: Bearer`).
 */
export type FleetRequest =
  | 'poll'
  | 'refresh'
  | 'login'
  | 'serviceList'
  | 'dial'
  | 'oidcPoll'
  | 'oidcRefresh'
  | 'oidcLogin'
  | 'oidcServiceList'
  | 'oidcDial';

/** One kind of request of an enrolled device: how often it comes and which function answers it. */
export interface FleetRequestKind {
  readonly request: FleetRequest;
  readonly label: string;
  readonly perDeviceDay: number;
  readonly functionName: 'poll' | 'client' | 'authentication' | 'sessions';
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
    functionName: 'poll',
  },
  {
    request: 'refresh',
    label: 'session refresh, `GET /current-api-session`',
    perDeviceDay: (24 * 60) / 20,
    functionName: 'poll',
  },
  { request: 'login', label: 'certificate login', perDeviceDay: 1, functionName: 'authentication' },
  { request: 'serviceList', label: 'service list, `GET /services`', perDeviceDay: 1, functionName: 'client' },
  { request: 'dial', label: 'Dial session, `POST /sessions`', perDeviceDay: 10, functionName: 'sessions' },
];

/**
 * The access token's lifetime, the reference's and ours (`OIDC_ACCESS_TOKEN_SECONDS`, 1,800 by default), and how
 * often the C SDK refreshes it on average: at a random point between 1/2 and 5/6 of the token's remaining life
 * (`sdk-c library/oidc.c`, `oidc_refresh_delay`, in 1.18.2 as in 1.18.7), 2/3 of it on average: every 20 minutes,
 * as its legacy API session. (Snapshots of the file from between October 2025 and April 2026 refreshed at exactly half
 * the lifetime, every 15 minutes.)
 */
export const OIDC_ACCESS_TOKEN_SECONDS = 1_800;
export const OIDC_REFRESH_SECONDS = (OIDC_ACCESS_TOKEN_SECONDS * 2) / 3;

/**
 * The requests of the C SDK's OIDC certificate login (`sdk-c library/oidc.c`): `POST /oidc/authorize` (its parameters
 * in the query), `POST /oidc/login/cert?id=`, `GET /oidc/authorize/callback?id=`, `POST /oidc/oauth/token`, each an
 * invocation of the authentication function.
 */
export const OIDC_CERT_LOGIN_REQUESTS = 4;

/**
 * The same C SDK under OIDC: the poll and its Dial sessions and service list as legacy, with the access token as a
 * bearer; the token refreshed every {@link OIDC_REFRESH_SECONDS} on average (`POST /oidc/oauth/token`,
 * `grant_type=refresh_token`: 72 a day) instead of the API session's refresh (an OIDC SDK sends no
 * `GET /current-api-session`); its daily login the four requests of the code flow ({@link OIDC_CERT_LOGIN_REQUESTS}),
 * each priced as a request with the flow's measured figures shared among them.
 */
export const C_SDK_OIDC_DAY: readonly FleetRequestKind[] = [
  {
    request: 'oidcPoll',
    label: 'OIDC poll, `GET /current-api-session/service-updates` with a bearer',
    perDeviceDay: 24 * 60,
    functionName: 'poll',
  },
  {
    request: 'oidcRefresh',
    label: 'OIDC token refresh, `POST /oidc/oauth/token` (`refresh_token`)',
    perDeviceDay: (24 * 3600) / OIDC_REFRESH_SECONDS,
    functionName: 'authentication',
  },
  {
    request: 'oidcLogin',
    label: `OIDC certificate login, a request of its ${OIDC_CERT_LOGIN_REQUESTS} (authorize, login/cert, callback, token)`,
    perDeviceDay: OIDC_CERT_LOGIN_REQUESTS,
    functionName: 'authentication',
  },
  {
    request: 'oidcServiceList',
    label: 'OIDC service list, `GET /services` with a bearer',
    perDeviceDay: 1,
    functionName: 'client',
  },
  {
    request: 'oidcDial',
    label: 'OIDC Dial session, `POST /sessions` with a bearer',
    perDeviceDay: 10,
    functionName: 'sessions',
  },
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

/** A front door as deployed: the REST API or the load balancer, with the web ACL in front (`firewall`) or not. */
export interface Door {
  readonly frontDoor: FrontDoor;
  readonly firewall: boolean;
  /** With the routers' control channel endpoint (`routerEndpoint: true`) at its default size, for the fleet's routers. */
  readonly routerEndpoint?: { readonly routers: number };
}

/** What the stack costs a month whatever its traffic, counted from `cdk/` (the item, its count, its monthly price). */
export interface FixedItem {
  readonly item: string;
  readonly count: number;
  readonly monthly: number;
}

/** The rules of the web ACL (`controller-firewall.ts`): three managed rule groups and two rate-based rules. */
export const WEB_ACL_RULES = 5;

/**
 * The alarms `controller-monitoring.ts` makes for a door: two per function (errors, throttles: each operation group's,
 * the bootstrap's and the integrity scan's), one for the ended sessions' sweep (its errors: it throttles itself to
 * one run at a time), the front door's 5xx, the table's throttles and system errors, a failed integrity run, KMS
 * errors; the load balancer's rejected connections and target errors; the web ACL's blocked requests. A CDK test
 * counts them in the synthesised templates of both doors, with and without the web ACL.
 */
export function alarmCount(door: Door): number {
  // Errors and throttles of every function but the sweep, whose own reserved concurrency throttles it: errors only.
  const perFunction = 2 * functionSources(ROUTES).length - 1;
  const always = 1 + 2 + 1 + 1;
  const routerEndpoint = door.routerEndpoint ? ROUTER_ENDPOINT_ALARMS : 0;
  return perFunction + always + (door.frontDoor === 'alb' ? 2 : 0) + (door.firewall ? 1 : 0) + routerEndpoint;
}

/**
 * The routers' endpoint's alarms: no healthy task, an unhealthy task, task CPU, a router data model too large
 * (`controller-monitoring.ts`).
 */
export const ROUTER_ENDPOINT_ALARMS = 4;

/**
 * What one router's control channel moves an hour through the load balancer: a heartbeat each way every ten seconds
 * and its answer (some 100 bytes each with TLS), and the data model's updates, generously.
 */
export const ROUTER_CHANNEL_GB_PER_HOUR = 0.001;

/** The routers' endpoint's hourly items, named apart from the rest: its tasks, load balancer, NLCUs and addresses. */
export function routerEndpointItems(routers: number): FixedItem[] {
  const { fargate, nlb, publicIpv4Hour } = ROUTER_ENDPOINT_PRICES;
  const hours = FLEET_PRICES.hoursPerMonth;
  const { cpu, memoryMb, desiredCount } = DEFAULT_ROUTER_ENDPOINT;
  const taskHour = (cpu / 1024) * fargate.arm64VcpuHour + (memoryMb / 1024) * fargate.arm64GbHour;
  // A router holds one long connection: active flows and bytes, not new connections, are what it uses of an NLCU.
  const nlcus = Math.max(
    routers / nlb.nlcu.activeConnectionsPerMinute,
    (routers * ROUTER_CHANNEL_GB_PER_HOUR) / nlb.nlcu.gbPerHour,
  );
  const zones = 2;
  return [
    {
      item: `Router endpoint: Fargate tasks (arm64, ${cpu / 1024} vCPU, ${memoryMb / 1024} GB)`,
      count: desiredCount,
      monthly: hours * taskHour,
    },
    { item: 'Router endpoint: Network Load Balancer', count: 1, monthly: hours * nlb.hour },
    { item: `Router endpoint: NLCUs (${routers} routers)`, count: nlcus, monthly: hours * nlb.nlcuHour },
    { item: 'Router endpoint: public IPv4 addresses', count: desiredCount + zones, monthly: hours * publicIpv4Hour },
  ];
}

/**
 * A run of the ended sessions' sweep (`cdk/controller-session-sweep.ts`) with nothing to sweep, as measured in-process
 * on DynamoDB Local (200 warm runs): about 6 ms of CPU and four requests one after the other (its mark read strongly,
 * 1 read unit; the two one-minute partitions of the routers' change log its window spans, eventually consistent, 0.5
 * each; its mark written, 1 write unit), and its one log line, 524 bytes with a deployed function's context. What a
 * run removes is left out, as are the changes that end sessions (a fleet's day has none).
 */
export const SESSION_SWEEP_RUN: MeasuredRequest = {
  cpuMsPerRequest: 6,
  wavesPerRequest: 4,
  readUnits: 2,
  writeUnits: 1,
  logBytes: 524,
};

/** The sweep's runs in a month: one a minute, whatever the traffic. */
export const SESSION_SWEEP_RUNS_PER_MONTH = SECONDS_PER_MONTH / SESSION_SWEEP_INTERVAL.toSeconds();

/**
 * What the sweep's runs cost a month: Lambda at its memory, its request units on demand (with a provisioned table they
 * fall within its capacity, which the bill counts already: there this is about $0.04 too high), its log lines.
 */
export function sessionSweepMonth(): number {
  const { readUnits, writeUnits, logBytes } = SESSION_SWEEP_RUN;
  const perRun =
    (lambdaPerMillion(SESSION_SWEEP_RUN, functionMemoryMb('session-sweep')) +
      dynamoDbOnDemandPerMillion(readUnits, writeUnits)) /
      1e6 +
    (logBytes / 1e9) * FLEET_PRICES.cloudWatch.logsIngestedGb;
  return SESSION_SWEEP_RUNS_PER_MONTH * perRun;
}

/**
 * The stack's fixed monthly items for a door: KMS keys (2 CA signing keys, and the server key's, the stored secrets',
 * the logs' and the admin password's encryption keys: `controller-keys.ts`), the 2 secrets (server key, admin
 * password), the alarms ({@link alarmCount}), the ended sessions' sweep's runs ({@link sessionSweepMonth}), with the
 * firewall the web ACL and its rules, and with the routers' endpoint its own items ({@link routerEndpointItems}). The
 * front door load balancer's hours are its price, not here.
 */
export function fixedItems(door: Door): FixedItem[] {
  return [
    { item: 'KMS keys', count: 6, monthly: AWS_PRICES.kms.keyMonth },
    { item: 'Secrets Manager secrets', count: 2, monthly: FLEET_PRICES.secretsManager.secretMonth },
    { item: 'CloudWatch alarms', count: alarmCount(door), monthly: FLEET_PRICES.cloudWatch.alarmMonth },
    {
      item: `ended sessions' sweep (${SESSION_SWEEP_RUNS_PER_MONTH.toLocaleString('en-US')} runs: Lambda, DynamoDB, logs)`,
      count: 1,
      monthly: sessionSweepMonth(),
    },
    ...(door.firewall
      ? [
          { item: 'WAF web ACL', count: 1, monthly: FLEET_PRICES.waf.webAclMonth },
          { item: 'WAF rules', count: WEB_ACL_RULES, monthly: FLEET_PRICES.waf.ruleMonth },
        ]
      : []),
    ...(door.routerEndpoint ? routerEndpointItems(door.routerEndpoint.routers) : []),
  ];
}

/** Assumptions about the traffic that the bench cannot measure, stated with the bill. */
export const FLEET_ASSUMPTIONS = {
  /**
   * Bytes through the load balancer per request: a TLS handshake with the device's certificate chain (the C SDK
   * closes its controller connection once its last request is answered, so each poll is a new connection whatever
   * the load balancer's idle timeout), the request and the answer.
   */
  bytesPerRequest: 6_000,
  /** New connections per request at the load balancer (one each, as above). */
  newConnectionsPerRequest: 1,
  /**
   * Listener rules the load balancer evaluates per request, at most: the fleet's requests are taken by the first five
   * (`cdk/load-balancer-rules.ts`, `FLEET_PATHS`; a CDK test holds them to this), within the 10 free.
   */
  rulesPerRequest: 5,
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
  readonly firewall: boolean;
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
 * second, over auto scaling's target utilisation, at the unit-hour price (a steady fleet: polls spread evenly), never
 * less than the stack's minimum capacity (`DEFAULT_PROVISIONED_CAPACITY`) on the table and on each of its indexes,
 * which auto scaling keeps however idle they are.
 */
export function dynamoDbMonth(readUnits: number, writeUnits: number, capacity: CapacityMode): number {
  if (capacity === 'on-demand') return dynamoDbOnDemandPerMillion(readUnits, writeUnits) / 1e6;
  const { readCapacityUnitHour, writeCapacityUnitHour } = FLEET_PRICES.dynamoDbProvisioned;
  const tableAndIndexes = 1 + TABLE_KEYS.indexes.length;
  const provisioned = (units: number, minimum: number) =>
    Math.max(tableAndIndexes * minimum, units / SECONDS_PER_MONTH / FLEET_ASSUMPTIONS.autoScalingTargetUtilisation);
  const { read, write } = DEFAULT_PROVISIONED_CAPACITY;
  return (
    FLEET_PRICES.hoursPerMonth *
    (provisioned(readUnits, read.min) * readCapacityUnitHour +
      provisioned(writeUnits, write.min) * writeCapacityUnitHour)
  );
}

/** What the fixed items cost a month. */
export function fixedMonth(items: readonly FixedItem[]): number {
  return items.reduce((sum, item) => sum + item.count * item.monthly, 0);
}

/** The month of a fleet: every part from its requests, the measured figures and the chosen memory per function. */
export function fleetMonth(
  devices: number,
  door: Door,
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
  const { frontDoor, firewall } = door;
  const frontDoorCost = frontDoor === 'rest' ? restApiMonth(requests) : loadBalancerMonth(requests, devices);
  // A web ACL bills every request it inspects: it cannot leave the poll's path out.
  const waf = firewall ? (requests / 1e6) * FLEET_PRICES.waf.perMillionRequests : 0;
  const dynamoDb = dynamoDbMonth(readUnits, writeUnits, capacity);
  const logs = (logBytesOf(byKind, measured, day) / 1e9) * FLEET_PRICES.cloudWatch.logsIngestedGb;
  const fixed = fixedMonth(fixedItems(door));
  return {
    devices,
    frontDoor,
    firewall,
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
export function idleMonth(door: Door): number {
  return (
    fixedMonth(fixedItems(door)) + (door.frontDoor === 'alb' ? FLEET_PRICES.hoursPerMonth * FLEET_PRICES.alb.hour : 0)
  );
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
