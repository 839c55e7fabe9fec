import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ControllerConfig } from '../config.ts';
import { traced } from '../log/tracing.ts';
import { NodeSha256 } from './node-sha256.ts';

/**
 * One document client per cold start. With an endpoint (DynamoDB Local) and no AWS credentials in the environment,
 * static dummy credentials are used: DynamoDB Local checks only that a request is signed. Requests are signed with
 * `NodeSha256`: signing is a good part of a request's CPU, and every SDK poll is one request.
 */
export function createDocumentClient(config: ControllerConfig): DynamoDBDocumentClient {
  const local = config.dynamoDbEndpoint !== undefined && !process.env.AWS_ACCESS_KEY_ID;
  const client = traced(
    new DynamoDBClient({
      region: config.region,
      ...(config.dynamoDbEndpoint ? { endpoint: config.dynamoDbEndpoint } : {}),
      ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
      maxAttempts: 3,
      sha256: NodeSha256,
    }),
  );
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}
