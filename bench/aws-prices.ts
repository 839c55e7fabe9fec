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
    /** The memory the stack gives every function. */
    memoryGb: 1,
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
  },
} as const;
