import { AWS_PRICES } from './aws-prices.ts';
import { dynamoDbOnDemandPerMillion } from './dynamodb-on-demand.ts';
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
 * duration on arm64 at the memory of the function that answered each request (`cdk/function-memory.ts`, which the
 * stack deploys), and one API Gateway REST request each. KMS requests are not included
 * (they are counted apart; the measured operations make none but enrollment and MFA).
 */
export function costPerMillion(
  figures: Pick<OperationFigures, 'readUnitsPerOp' | 'writeUnitsPerOp' | 'invocationsPerOp' | 'billedGbSecondsPerOp'>,
): CostPerMillion {
  const { lambda, apiGateway } = AWS_PRICES;
  const dynamo = dynamoDbOnDemandPerMillion(figures.readUnitsPerOp, figures.writeUnitsPerOp);
  const lambdaCost =
    figures.invocationsPerOp * lambda.requests + figures.billedGbSecondsPerOp * lambda.arm64GbSecond * 1_000_000;
  const api = figures.invocationsPerOp * apiGateway.restApi;
  return {
    dynamoDb: dynamo,
    lambda: lambdaCost,
    apiGateway: api,
    backend: dynamo + lambdaCost,
    allIn: dynamo + lambdaCost + api,
  };
}
