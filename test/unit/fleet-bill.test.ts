import { describe, expect, it } from 'vitest';
import { RouteMatcher } from '#shared/routes/route-matcher.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { AWS_PRICES, FLEET_PRICES, ROUTER_ENDPOINT_PRICES } from '../../bench/aws-prices.ts';
import { costPerMillion } from '../../bench/cost-per-million.ts';
import { dynamoDbOnDemandPerMillion } from '../../bench/dynamodb-on-demand.ts';
import {
  alarmCount,
  C_SDK_DAY,
  C_SDK_OIDC_DAY,
  type Door,
  dynamoDbMonth,
  FLEET_ASSUMPTIONS,
  type FleetRequest,
  fixedItems,
  fixedMonth,
  fleetMonth,
  idleMonth,
  loadBalancerCapacityUnits,
  loggedBytesPerRequest,
  type MeasuredRequest,
  monthlyRequests,
  OIDC_CERT_LOGIN_REQUESTS,
  OIDC_REFRESH_SECONDS,
  PLATFORM_LINES_LOGGED,
  restApiMonth,
  routerEndpointItems,
  SESSION_SWEEP_RUN,
  sessionSweepMonth,
} from '../../bench/fleet-bill.ts';
import { cheapestMemory, lambdaPerMillion, modelledMs } from '../../bench/lambda-memory.ts';
import { memoryMbOf } from '../../bench/server-timer.ts';
import { DEFAULT_PROVISIONED_CAPACITY } from '../../cdk/table-capacity.ts';

/** The bill's arithmetic, on figures of the size the bench measures. */
const MEASURED = new Map<FleetRequest, MeasuredRequest>([
  ['poll', { readUnits: 3, writeUnits: 0, cpuMsPerRequest: 2, wavesPerRequest: 1, logBytes: 4 }],
  ['refresh', { readUnits: 1.5, writeUnits: 4, cpuMsPerRequest: 3, wavesPerRequest: 2, logBytes: 4 }],
  ['login', { readUnits: 6.5, writeUnits: 10, cpuMsPerRequest: 10, wavesPerRequest: 2, logBytes: 900 }],
  ['serviceList', { readUnits: 6, writeUnits: 0, cpuMsPerRequest: 12, wavesPerRequest: 4, logBytes: 4 }],
  ['dial', { readUnits: 10.5, writeUnits: 7, cpuMsPerRequest: 15, wavesPerRequest: 4, logBytes: 400 }],
  ['oidcPoll', { readUnits: 1, writeUnits: 0, cpuMsPerRequest: 3.5, wavesPerRequest: 1, logBytes: 7 }],
  ['oidcRefresh', { readUnits: 1.5, writeUnits: 6, cpuMsPerRequest: 6, wavesPerRequest: 3, logBytes: 300 }],
  ['oidcLogin', { readUnits: 3, writeUnits: 5, cpuMsPerRequest: 5, wavesPerRequest: 1.5, logBytes: 400 }],
  ['oidcServiceList', { readUnits: 6, writeUnits: 0, cpuMsPerRequest: 12.5, wavesPerRequest: 4, logBytes: 4 }],
  ['oidcDial', { readUnits: 10.5, writeUnits: 7, cpuMsPerRequest: 15.5, wavesPerRequest: 4, logBytes: 400 }],
]);
const MEMORY = () => 512;
const REST: Door = { frontDoor: 'rest', firewall: true };
const ALB: Door = { frontDoor: 'alb', firewall: true };
const ALB_ALONE: Door = { frontDoor: 'alb', firewall: false };

describe("a fleet's month", () => {
  it("sends ~457 M requests a month from 10,000 devices on the C SDK's timers", () => {
    const requests = [...monthlyRequests(10_000).values()].reduce((sum, each) => sum + each, 0);
    expect(requests).toBe(457_200_000);
    expect(monthlyRequests(10_000).get('poll')).toBe(432_000_000);
  });

  it('is the sum of its parts under each front door and capacity mode', () => {
    for (const door of [REST, ALB, ALB_ALONE]) {
      for (const capacity of ['on-demand', 'provisioned'] as const) {
        const month = fleetMonth(10_000, door, capacity, MEASURED, MEMORY);
        const parts = month.frontDoorCost + month.waf + month.lambda + month.dynamoDb + month.logs + month.fixed;
        expect(month.total).toBeCloseTo(parts, 9);
        expect(month.requests).toBe(457_200_000);
      }
    }
  });

  it('prices each part from the requests: WAF per million, Lambda per request kind, on-demand units', () => {
    const month = fleetMonth(1_000, REST, 'on-demand', MEASURED, MEMORY);
    const byKind = monthlyRequests(1_000);
    expect(month.waf).toBeCloseTo((45_720_000 / 1e6) * FLEET_PRICES.waf.perMillionRequests, 9);
    const lambda = C_SDK_DAY.reduce(
      (sum, kind) => sum + (byKind.get(kind.request)! / 1e6) * lambdaPerMillion(MEASURED.get(kind.request)!, 512),
      0,
    );
    expect(month.lambda).toBeCloseTo(lambda, 9);
    const reads = C_SDK_DAY.reduce(
      (sum, kind) => sum + byKind.get(kind.request)! * MEASURED.get(kind.request)!.readUnits,
      0,
    );
    const writes = C_SDK_DAY.reduce(
      (sum, kind) => sum + byKind.get(kind.request)! * MEASURED.get(kind.request)!.writeUnits,
      0,
    );
    expect(month.dynamoDb).toBeCloseTo(
      (reads * AWS_PRICES.dynamoDb.readRequestUnit + writes * AWS_PRICES.dynamoDb.writeRequestUnit) / 1e6,
      9,
    );
  });

  it('bills no WAF requests and no web ACL without the firewall, the rest of the month the same', () => {
    const guarded = fleetMonth(10_000, ALB, 'provisioned', MEASURED, MEMORY);
    const alone = fleetMonth(10_000, ALB_ALONE, 'provisioned', MEASURED, MEMORY);
    expect(alone.waf).toBe(0);
    expect(guarded.waf).toBeCloseTo((457_200_000 / 1e6) * FLEET_PRICES.waf.perMillionRequests, 6);
    const webAcl = FLEET_PRICES.waf.webAclMonth + 5 * FLEET_PRICES.waf.ruleMonth + FLEET_PRICES.cloudWatch.alarmMonth;
    expect(guarded.fixed - alone.fixed).toBeCloseTo(webAcl, 9);
    expect(guarded.total - alone.total).toBeCloseTo(guarded.waf + webAcl, 6);
    expect(alone.firewall).toBe(false);
  });

  it('prices the logs from the bytes each request logs, without Lambda platform lines at the WARN system level', () => {
    const month = fleetMonth(10_000, ALB, 'on-demand', MEASURED, MEMORY);
    const byKind = monthlyRequests(10_000);
    const bytes = C_SDK_DAY.reduce(
      (sum, kind) => sum + byKind.get(kind.request)! * MEASURED.get(kind.request)!.logBytes,
      0,
    );
    expect(PLATFORM_LINES_LOGGED).toBe(false);
    expect(month.logs).toBeCloseTo((bytes / 1e9) * FLEET_PRICES.cloudWatch.logsIngestedGb, 9);
  });

  it('prices REST requests by tier: 333 M at $3.50, the next 667 M at $2.80', () => {
    expect(restApiMonth(100_000_000)).toBeCloseTo(350, 9);
    expect(restApiMonth(457_200_000)).toBeCloseTo(333 * 3.5 + 124.2 * 2.8, 6);
    expect(restApiMonth(2_000_000_000)).toBeCloseTo(333 * 3.5 + 667 * 2.8 + 1_000 * 2.38, 6);
  });

  it("bills the load balancer's binding dimension: new connections for a polling fleet", () => {
    // 457.2 M requests over 30 days: 176 new connections a second, 7.05 LCU; 10,000 devices are 3.3 LCU of active ones.
    expect(loadBalancerCapacityUnits(457_200_000, 10_000)).toBeCloseTo(457_200_000 / (30 * 86_400) / 25, 6);
    // A few devices polling rarely: their active connections bind.
    expect(loadBalancerCapacityUnits(1_000, 30_000)).toBeCloseTo(10, 6);
  });

  it("provisions capacity for the average load over the target utilisation, never less than the stack's minimum on the table and each index", () => {
    const seconds = 30 * 86_400;
    const { read, write } = DEFAULT_PROVISIONED_CAPACITY;
    const { readCapacityUnitHour, writeCapacityUnitHour } = FLEET_PRICES.dynamoDbProvisioned;
    // 700 reads a second need 1,000 units at 70%; no writes keep the table and its 3 indexes at their minimum.
    expect(dynamoDbMonth(700 * seconds, 0, 'provisioned')).toBeCloseTo(
      730 * (1_000 * readCapacityUnitHour + 4 * write.min * writeCapacityUnitHour),
      6,
    );
    expect(dynamoDbMonth(0, 0, 'provisioned')).toBeCloseTo(
      730 * (4 * read.min * readCapacityUnitHour + 4 * write.min * writeCapacityUnitHour),
      6,
    );
    expect(dynamoDbMonth(0, 0, 'on-demand')).toBe(0);
  });

  it('prices on-demand units in one place: a read unit at $0.125 a million, a write unit at $0.625', () => {
    expect(dynamoDbOnDemandPerMillion(3, 0)).toBeCloseTo(0.375, 9);
    expect(dynamoDbOnDemandPerMillion(1.5, 4)).toBeCloseTo(0.1875 + 2.5, 9);
    expect(dynamoDbMonth(2e6, 1e6, 'on-demand')).toBeCloseTo(dynamoDbOnDemandPerMillion(2, 1), 9);
  });

  it('counts the fixed items of each door: the load balancer adds 2 alarms, the firewall its web ACL, rules and alarm', () => {
    expect(alarmCount(ALB) - alarmCount(REST)).toBe(2);
    expect(alarmCount(ALB) - alarmCount(ALB_ALONE)).toBe(1);
    expect(fixedItems(ALB_ALONE).map((item) => item.item)).not.toContain('WAF web ACL');
    expect(fixedItems(REST).find((item) => item.item === 'WAF rules')?.count).toBe(5);
  });

  it("adds the routers' endpoint as items of its own: two small arm64 tasks, the NLB's hours, NLCUs and addresses", () => {
    const withEndpoint: Door = { ...REST, routerEndpoint: { routers: 100 } };
    const added = fixedItems(withEndpoint).filter((item) => item.item.startsWith('Router endpoint'));
    expect(added).toEqual(routerEndpointItems(100));
    expect(fixedItems(REST).filter((item) => item.item.startsWith('Router endpoint'))).toEqual([]);
    const { fargate, nlb, publicIpv4Hour } = ROUTER_ENDPOINT_PRICES;
    // 2 tasks of a quarter vCPU and half a GB, 730 hours each.
    const tasks = 2 * 730 * (0.25 * fargate.arm64VcpuHour + 0.5 * fargate.arm64GbHour);
    expect(fixedMonth(added)).toBeCloseTo(
      tasks + 730 * nlb.hour + 730 * nlb.nlcuHour * 0.1 + 4 * 730 * publicIpv4Hour,
      6,
    );
    expect(fixedMonth(added)).toBeGreaterThan(40);
    expect(fixedMonth(added)).toBeLessThan(50);
  });

  it("counts the ended sessions' sweep a fixed item: a run a minute at 256 MB, its units on demand, its log line", () => {
    // 43,200 runs; each 6 ms of CPU stretched to 256 MB and four 4 ms waves, billed 58 ms of a quarter GB.
    const lambda = AWS_PRICES.lambda.requests + 0.058 * 0.25 * AWS_PRICES.lambda.arm64GbSecond * 1e6;
    const units = 2 * AWS_PRICES.dynamoDb.readRequestUnit + AWS_PRICES.dynamoDb.writeRequestUnit;
    const logs = (SESSION_SWEEP_RUN.logBytes / 1e9) * FLEET_PRICES.cloudWatch.logsIngestedGb;
    expect(sessionSweepMonth()).toBeCloseTo(43_200 * ((lambda + units) / 1e6 + logs), 9);
    expect(sessionSweepMonth()).toBeLessThan(0.1);
    for (const door of [REST, ALB, ALB_ALONE]) {
      const sweep = fixedItems(door).filter((item) => item.item.startsWith("ended sessions' sweep"));
      expect(sweep.map((item) => item.count * item.monthly)).toEqual([sessionSweepMonth()]);
    }
  });

  it('costs only the fixed items idle on the REST API, and the load balancer hours beside them', () => {
    expect(idleMonth(REST)).toBeCloseTo(fixedMonth(fixedItems(REST)), 9);
    expect(idleMonth(ALB)).toBeCloseTo(fixedMonth(fixedItems(ALB)) + 730 * FLEET_PRICES.alb.hour, 9);
    expect(idleMonth(ALB_ALONE)).toBeCloseTo(fixedMonth(fixedItems(ALB_ALONE)) + 730 * FLEET_PRICES.alb.hour, 9);
    expect(idleMonth(REST)).toBeLessThanOrEqual(25);
  });
});

describe("a fleet's month under OIDC", () => {
  it('refreshes the access token at 1/2 to 5/6 of its 30-minute life, as the C SDK does: 72 refreshes a device a day', () => {
    expect(OIDC_REFRESH_SECONDS).toBe(1_200);
    const refresh = C_SDK_OIDC_DAY.find((kind) => kind.request === 'oidcRefresh');
    expect(refresh?.perDeviceDay).toBe(72);
    expect(refresh?.functionName).toBe('authentication');
  });

  it("sends the legacy day's polls, service list and Dial sessions, no API session refresh, a login of four requests", () => {
    const perDay = (request: FleetRequest) => C_SDK_OIDC_DAY.find((kind) => kind.request === request)?.perDeviceDay;
    expect(perDay('oidcPoll')).toBe(1_440);
    expect(perDay('oidcServiceList')).toBe(1);
    expect(perDay('oidcDial')).toBe(10);
    expect(perDay('oidcLogin')).toBe(OIDC_CERT_LOGIN_REQUESTS);
    expect(OIDC_CERT_LOGIN_REQUESTS).toBe(4);
    expect(C_SDK_OIDC_DAY.map((kind) => kind.request)).not.toContain('refresh');
    // 1,440 + 72 + 4 + 1 + 10 a device a day, over 30 days.
    const requests = [...monthlyRequests(10_000, C_SDK_OIDC_DAY).values()].reduce((sum, each) => sum + each, 0);
    expect(requests).toBe(458_100_000);
  });

  it('prices the OIDC day from its own kinds only, each part the sum over them', () => {
    for (const door of [REST, ALB, ALB_ALONE]) {
      for (const capacity of ['on-demand', 'provisioned'] as const) {
        const month = fleetMonth(10_000, door, capacity, MEASURED, MEMORY, C_SDK_OIDC_DAY);
        const parts = month.frontDoorCost + month.waf + month.lambda + month.dynamoDb + month.logs + month.fixed;
        expect(month.total).toBeCloseTo(parts, 9);
        expect(month.requests).toBe(458_100_000);
        // The fixed items do not depend on the day.
        expect(month.fixed).toBeCloseTo(fleetMonth(10_000, door, capacity, MEASURED, MEMORY).fixed, 9);
      }
    }
    const month = fleetMonth(1_000, REST, 'on-demand', MEASURED, MEMORY, C_SDK_OIDC_DAY);
    const byKind = monthlyRequests(1_000, C_SDK_OIDC_DAY);
    const lambda = C_SDK_OIDC_DAY.reduce(
      (sum, kind) => sum + (byKind.get(kind.request)! / 1e6) * lambdaPerMillion(MEASURED.get(kind.request)!, 512),
      0,
    );
    expect(month.lambda).toBeCloseTo(lambda, 9);
    expect(month.waf).toBeCloseTo((45_810_000 / 1e6) * FLEET_PRICES.waf.perMillionRequests, 9);
  });

  it('refuses to price a day whose kinds were not measured', () => {
    const legacyOnly = new Map([...MEASURED].filter(([request]) => !request.startsWith('oidc')));
    expect(() => fleetMonth(100, REST, 'on-demand', legacyOnly, MEMORY, C_SDK_OIDC_DAY)).toThrow(/oidcPoll/);
  });
});

describe('the cost per million of a measured operation', () => {
  it('bills Lambda at the memory of the function that answers each request, as the stack deploys it', () => {
    expect(memoryMbOf('GET', '/edge/client/v1/current-api-session/service-updates')).toBe(256);
    expect(memoryMbOf('GET', '/current-api-session')).toBe(256);
    expect(memoryMbOf('GET', '/services')).toBe(512);
    expect(memoryMbOf('POST', '/sessions?x=1')).toBe(512);
    expect(memoryMbOf('POST', '/edge/client/v1/authenticate?method=cert')).toBe(1_024);
    expect(memoryMbOf('GET', '/no-such-thing')).toBe(1_024);
  });

  it("prices each of a fleet's requests at the function the route table sends it to", () => {
    const sent: Record<FleetRequest, [string, string]> = {
      poll: ['GET', '/edge/client/v1/current-api-session/service-updates'],
      refresh: ['GET', '/edge/client/v1/current-api-session'],
      login: ['POST', '/edge/client/v1/authenticate'],
      serviceList: ['GET', '/edge/client/v1/services'],
      dial: ['POST', '/edge/client/v1/sessions'],
      oidcPoll: ['GET', '/edge/client/v1/current-api-session/service-updates'],
      oidcRefresh: ['POST', '/oidc/oauth/token'],
      oidcLogin: ['POST', '/oidc/login/cert'],
      oidcServiceList: ['GET', '/edge/client/v1/services'],
      oidcDial: ['POST', '/edge/client/v1/sessions'],
    };
    const routes = new RouteMatcher(ROUTES);
    for (const kind of [...C_SDK_DAY, ...C_SDK_OIDC_DAY]) {
      const match = routes.match(...sent[kind.request]);
      expect(match.kind === 'found' ? match.route.group : undefined, kind.request).toBe(kind.functionName);
    }
  });

  it('prices the billed GB-seconds it is given, with the invocations and the on-demand units', () => {
    // A 10 ms request at 512 MB: 0.005 GB-s.
    const cost = costPerMillion({
      readUnitsPerOp: 3,
      writeUnitsPerOp: 0,
      invocationsPerOp: 1,
      billedGbSecondsPerOp: 0.005,
    });
    expect(cost.lambda).toBeCloseTo(0.2 + 0.005 * AWS_PRICES.lambda.arm64GbSecond * 1e6, 9);
    expect(cost.dynamoDb).toBeCloseTo(dynamoDbOnDemandPerMillion(3, 0), 9);
    expect(cost.backend).toBeCloseTo(cost.lambda + cost.dynamoDb, 9);
  });
});

describe('the bytes a request logs', () => {
  const extra = FLEET_ASSUMPTIONS.deployedLineExtraBytes;
  const read = JSON.stringify({ level: 'INFO', message: 'request', method: 'GET', status: 200, sampleRate: 1 });
  const failure = JSON.stringify({
    level: 'INFO',
    message: 'request',
    method: 'GET',
    status: 401,
    code: 'UNAUTHORIZED',
  });

  it('counts a sampled line at the rate the stack samples, as that line would print, and every other line whole', () => {
    const sampledAt100 = JSON.stringify({ ...JSON.parse(read), sampleRate: 100 });
    expect(loggedBytesPerRequest([read], 1, 100)).toBeCloseTo((sampledAt100.length + extra) / 100, 9);
    expect(loggedBytesPerRequest([failure], 1, 100)).toBeCloseTo(failure.length + extra, 9);
  });

  it('averages over the requests the lines were printed for', () => {
    expect(loggedBytesPerRequest([failure, failure], 4, 100)).toBeCloseTo((2 * (failure.length + extra)) / 4, 9);
    expect(loggedBytesPerRequest([], 10, 100)).toBe(0);
  });
});

describe("Lambda's memory, modelled", () => {
  it('stretches CPU below a full vCPU (1,769 MB) and adds a DynamoDB round trip per wave', () => {
    const poll = { cpuMsPerRequest: 2, wavesPerRequest: 1 };
    expect(modelledMs(poll, 1_769)).toBeCloseTo(2 + 4, 9);
    expect(modelledMs(poll, 256)).toBeCloseTo((2 * 1_769) / 256 + 4, 9);
    // 17.8 ms billed as 18 at a quarter GB, and the request.
    expect(lambdaPerMillion(poll, 256)).toBeCloseTo(0.2 + 0.018 * 0.25 * AWS_PRICES.lambda.arm64GbSecond * 1e6, 9);
  });

  it('picks the cheapest size under the latency cap, a larger one for CPU-heavy requests', () => {
    expect(cheapestMemory([{ cpuMsPerRequest: 2, wavesPerRequest: 1, weight: 1 }])).toBe(256);
    // Argon2id's 45 ms: 155 ms at 512 MB, 82 ms at 1,024.
    expect(cheapestMemory([{ cpuMsPerRequest: 45, wavesPerRequest: 2, weight: 1 }])).toBe(1_024);
  });
});
