import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The table as the store's own helpers (role catalog, filter packs) reach it: the client, the table's name and the
 * bounded batch read. The store is one; naming this much apart keeps the helpers below the store that uses them.
 */
export interface TableClient {
  readonly db: DynamoDBDocumentClient;
  readonly tableName: string;
  batchGet(itemKeys: readonly Record<string, unknown>[], projection?: string): Promise<Record<string, unknown>[]>;
}
