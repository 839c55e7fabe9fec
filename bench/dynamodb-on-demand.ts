import { AWS_PRICES } from './aws-prices.ts';

/**
 * What request units cost on demand, in dollars per million of what they are counted over: per million requests when
 * given per request, the month's dollars times a million when given a month's units.
 */
export function dynamoDbOnDemandPerMillion(readUnits: number, writeUnits: number): number {
  return readUnits * AWS_PRICES.dynamoDb.readRequestUnit + writeUnits * AWS_PRICES.dynamoDb.writeRequestUnit;
}
