import { AWS_PRICES } from './aws-prices.ts';
import type { OperationFigures } from './measure-operation.ts';

/** Dollars per million runs of an operation, by service, from its measured units, invocations and server time. */
export interface CostPerMillion {
  readonly dynamoDb: number;
  readonly lambda: number;
  readonly apiGateway: number;
  /** Lambda and DynamoDB: what the controller's own design decides. */
  readonly backend: number;
  /** Backend and API Gateway (REST): what a request costs the operator. */
  readonly allIn: number;
}

/**
 * A million runs cost their request units at the on-demand prices, their invocations (one a request) and their billed
 * duration at the stack's 1 GB arm64 Lambdas, and one API Gateway REST request each. KMS requests are not included
 * (they are counted apart; the measured operations make none but enrollment and MFA).
 */
export function costPerMillion(
  figures: Pick<OperationFigures, 'readUnitsPerOp' | 'writeUnitsPerOp' | 'invocationsPerOp' | 'billedMsPerOp'>,
): CostPerMillion {
  const { dynamoDb, lambda, apiGateway } = AWS_PRICES;
  const dynamo =
    figures.readUnitsPerOp * dynamoDb.readRequestUnit + figures.writeUnitsPerOp * dynamoDb.writeRequestUnit;
  const gbSeconds = (figures.billedMsPerOp / 1000) * lambda.memoryGb;
  const lambdaCost = figures.invocationsPerOp * lambda.requests + gbSeconds * lambda.arm64GbSecond * 1_000_000;
  const api = figures.invocationsPerOp * apiGateway.restApi;
  return {
    dynamoDb: dynamo,
    lambda: lambdaCost,
    apiGateway: api,
    backend: dynamo + lambdaCost,
    allIn: dynamo + lambdaCost + api,
  };
}
