import { CreateTableCommand, DescribeTableCommand, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';

/**
 * Creates the controller's table as the CDK stack defines it, unless it exists. Only for DynamoDB Local: in AWS the
 * stack owns the table.
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
        GlobalSecondaryIndexes: TABLE_KEYS.indexes.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await db.send(new DescribeTableCommand({ TableName: tableName }));
}
