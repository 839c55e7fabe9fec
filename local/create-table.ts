import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';

const INDEX_WAIT_MS = 60_000;
const INDEX_POLL_MS = 100;

/**
 * Creates the controller's table as the CDK stack defines it, unless it exists; a table kept in a local data directory
 * from before an index was added gets that index. Only for DynamoDB Local: in AWS the stack owns the table.
 */
export async function ensureTable(db: DynamoDBDocumentClient, tableName: string): Promise<void> {
  const attributes = new Set<string>([TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey]);
  for (const index of TABLE_KEYS.indexes) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  try {
    await db.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
        KeySchema: [
          { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: TABLE_KEYS.indexes.map(indexDefinition),
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  const { Table } = await db.send(new DescribeTableCommand({ TableName: tableName }));
  const existing = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  for (const index of TABLE_KEYS.indexes) {
    if (existing.has(index.name)) continue;
    await db.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [index.partitionKey, index.sortKey].map((name) => ({
          AttributeName: name,
          AttributeType: 'S',
        })),
        GlobalSecondaryIndexUpdates: [{ Create: indexDefinition(index) }],
      }),
    );
    await untilIndexActive(db, tableName, index.name);
  }
}

/** Waits while DynamoDB Local fills a new index: queries of an index still being created fail. */
async function untilIndexActive(db: DynamoDBDocumentClient, tableName: string, indexName: string): Promise<void> {
  for (let waited = 0; waited < INDEX_WAIT_MS; waited += INDEX_POLL_MS) {
    const { Table } = await db.send(new DescribeTableCommand({ TableName: tableName }));
    const index = Table?.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === indexName);
    if (index?.IndexStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, INDEX_POLL_MS));
  }
  throw new Error(`index ${indexName} of ${tableName} did not become active in ${INDEX_WAIT_MS / 1000} s`);
}

function indexDefinition(index: (typeof TABLE_KEYS.indexes)[number]) {
  return {
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: index.projection },
  };
}
