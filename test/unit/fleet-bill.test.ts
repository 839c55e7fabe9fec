import { describe, expect, it } from 'vitest';
import { AWS_PRICES, FLEET_PRICES } from '../../bench/aws-prices.ts';
import {
  C_SDK_DAY,
  dynamoDbMonth,
  FIXED_ITEMS,
  FLEET_ASSUMPTIONS,
  type FleetRequest,
  fixedMonth,
  fleetMonth,
  idleMonth,
  loadBalancerCapacityUnits,
  loggedBytesPerRequest,
  type MeasuredRequest,
  monthlyRequests,
  PLATFORM_LINES_LOGGED,
  restApiMonth,
} from '../../bench/fleet-bill.ts';
import { cheapestMemory, lambdaPerMillion, modelledMs } from '../../bench/lambda-memory.ts';

/** The bill's arithmetic, on figures of the size the bench measures. */
const MEASURED = new Map<FleetRequest, MeasuredRequest>([
  ['poll', { readUnits: 3, writeUnits: 0, cpuMsPerRequest: 2, wavesPerRequest: 1, logBytes: 4 }],
  ['refresh', { readUnits: 1.5, writeUnits: 4, cpuMsPerRequest: 3, wavesPerRequest: 2, logBytes: 4 }],
  ['login', { readUnits: 6.5, writeUnits: 10, cpuMsPerRequest: 10, wavesPerRequest: 2, logBytes: 900 }],
  ['serviceList', { readUnits: 6, writeUnits: 0, cpuMsPerRequest: 12, wavesPerRequest: 4, logBytes: 4 }],
  ['dial', { readUnits: 10.5, writeUnits: 7, cpuMsPerRequest: 15, wavesPerRequest: 4, logBytes: 400 }],
]);
const MEMORY = () => 512;

describe("a fleet's month", () => {
  it("sends ~457 M requests a month from 10,000 devices on the C SDK's timers", () => {
    const requests = [...monthlyRequests(10_000).values()].reduce((sum, each) => sum + each, 0);
    expect(requests).toBe(457_200_000);
    expect(monthlyRequests(10_000).get('poll')).toBe(432_000_000);
  });

  it('is the sum of its parts under each front door and capacity mode', () => {
    for (const door of ['rest', 'alb'] as const) {
      for (const capacity of ['on-demand', 'provisioned'] as const) {
        const month = fleetMonth(10_000, door, capacity, MEASURED, MEMORY);
        const parts = month.frontDoorCost + month.waf + month.lambda + month.dynamoDb + month.logs + month.fixed;
        expect(month.total).toBeCloseTo(parts, 9);
        expect(month.requests).toBe(457_200_000);
      }
    }
  });

  it('prices each part from the requests: WAF per million, Lambda per request kind, on-demand units', () => {
    const month = fleetMonth(1_000, 'rest', 'on-demand', MEASURED, MEMORY);
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

  it('prices the logs from the bytes each request logs, without Lambda platform lines at the WARN system level', () => {
    const month = fleetMonth(10_000, 'alb', 'on-demand', MEASURED, MEMORY);
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

  it('provisions capacity for the average load over the target utilisation, never less than a unit per table and index', () => {
    const seconds = 30 * 86_400;
    expect(dynamoDbMonth(700 * seconds, 0, 'provisioned')).toBeCloseTo(
      730 *
        (1_000 * FLEET_PRICES.dynamoDbProvisioned.readCapacityUnitHour +
          4 * FLEET_PRICES.dynamoDbProvisioned.writeCapacityUnitHour),
      6,
    );
    expect(dynamoDbMonth(0, 0, 'on-demand')).toBe(0);
  });

  it('costs only the fixed items idle on the REST API, and the load balancer hours beside it', () => {
    expect(fixedMonth()).toBeCloseTo(
      FIXED_ITEMS.reduce((sum, item) => sum + item.count * item.monthly, 0),
      9,
    );
    expect(idleMonth('rest')).toBeCloseTo(fixedMonth(), 9);
    expect(idleMonth('alb')).toBeCloseTo(fixedMonth() + 730 * FLEET_PRICES.alb.hour, 9);
    expect(idleMonth('rest')).toBeLessThanOrEqual(25);
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
