/**
 * AWS's public on-demand prices the bench's dollar figures use, in one place: US East (N. Virginia), first tier of
 * each, no free tier. `asOf` is the date of the latest change among them the bench knows of (DynamoDB's on-demand
 * cut of 50%, effective 2024-11-01; the Lambda and API Gateway prices are older). They were not re-read from AWS's
 * pricing pages when written here: check those pages and update the figures and the date together.
 */
export const AWS_PRICES = {
  asOf: '2024-11-01',
  region: 'us-east-1',
  dynamoDb: {
    /** On-demand, Standard table class (since the 50% cut of 2024-11-01): per million request units. */
    writeRequestUnit: 0.625,
    readRequestUnit: 0.125,
  },
  lambda: {
    /** arm64, per GB-second of duration (first 7.5 billion GB-seconds a month). */
    arm64GbSecond: 0.0000133334,
    /** Per million invocations. */
    requests: 0.2,
  },
  apiGateway: {
    /** Per million requests, first 333 million a month. */
    restApi: 3.5,
    /** Per million requests, first 300 million a month (for comparison: the stack uses a REST API). */
    httpApi: 1.0,
  },
  kms: {
    /** Per million requests: symmetric (GenerateDataKey, Decrypt) and asymmetric ECC (Sign). */
    symmetric: 3.0,
    asymmetric: 15.0,
    /** Per customer managed key a month, symmetric or asymmetric (rotated versions of a key are billed too, from the second). */
    keyMonth: 1.0,
  },
} as const;

/**
 * The prices the fleet's monthly bill adds (`fleet-bill.ts`), as the issue states them on 2026-11-25 from AWS's public
 * pricing pages (us-east-1, on-demand, no free tier): Elastic Load Balancing, WAF, DynamoDB provisioned capacity,
 * Secrets Manager, CloudWatch, and API Gateway's REST tiers beyond the first. Check those pages and update the figures
 * and the date together.
 */
export const FLEET_PRICES = {
  asOf: '2026-11-25',
  region: 'us-east-1',
  /** The hours a month of AWS's calculators: hourly resources bill this many; requests are counted over 30 days. */
  hoursPerMonth: 730,
  apiGateway: {
    /** REST API per million requests by monthly tier: first 333 M, next 667 M, next 19 B, beyond 20 B. */
    restTiers: [
      { upToMillions: 333, perMillion: 3.5 },
      { upToMillions: 1_000, perMillion: 2.8 },
      { upToMillions: 20_000, perMillion: 2.38 },
      { upToMillions: Number.POSITIVE_INFINITY, perMillion: 1.51 },
    ],
  },
  alb: {
    /** Application Load Balancer, per hour, and per load balancer capacity unit (LCU) hour. */
    hour: 0.0225,
    lcuHour: 0.008,
    /** What one LCU covers; the LCUs billed in an hour are those of the dimension that needs most. */
    lcu: {
      newConnectionsPerSecond: 25,
      activeConnectionsPerMinute: 3_000,
      /** Processed bytes with Lambda targets. */
      gbPerHour: 1,
      /** Rule evaluations a second, the first 10 rules free. */
      ruleEvaluationsPerSecond: 1_000,
      freeRules: 10,
    },
  },
  waf: {
    /** Per million requests the web ACL inspects, per web ACL a month, per rule (or rule group) a month. */
    perMillionRequests: 0.6,
    webAclMonth: 5,
    ruleMonth: 1,
  },
  dynamoDbProvisioned: {
    /** Provisioned capacity per unit-hour (Standard table class): a read unit is 1 strongly or 2 eventually consistent 4 KB reads a second. */
    readCapacityUnitHour: 0.00013,
    writeCapacityUnitHour: 0.00065,
  },
  secretsManager: {
    /** Per secret a month. */
    secretMonth: 0.4,
  },
  cloudWatch: {
    /** Per standard-resolution metric alarm a month. */
    alarmMonth: 0.1,
    /** Per GB of logs ingested (standard class). */
    logsIngestedGb: 0.5,
  },
} as const;

/**
 * The prices of the routers' control channel endpoint (`routerEndpoint: true`), us-east-1, on-demand, dated when they
 * were checked: Fargate's Linux/ARM rates as third-party pricing tables quote AWS's page (Vantage, "AWS Fargate
 * Pricing Explained"); the Network Load Balancer's hour and NLCU-hour as the issue gives them (AWS's page was not at
 * hand to re-read); public IPv4 addresses at AWS's rate since 2024-02-01. Check AWS's pricing pages and update the
 * figures and the date together.
 */
export const ROUTER_ENDPOINT_PRICES = {
  asOf: '2026-11-27',
  region: 'us-east-1',
  fargate: {
    /** Linux/ARM (Graviton), per vCPU-hour and per GB-hour of memory. */
    arm64VcpuHour: 0.03238,
    arm64GbHour: 0.00356,
  },
  nlb: {
    hour: 0.0225,
    nlcuHour: 0.006,
    /** What one NLCU covers for TCP; the NLCUs billed in an hour are those of the dimension that needs most. */
    nlcu: { newConnectionsPerSecond: 800, activeConnectionsPerMinute: 100_000, gbPerHour: 1 },
  },
  /** Per public IPv4 address-hour: each task's own, and the load balancer's one per zone. */
  publicIpv4Hour: 0.005,
} as const;
