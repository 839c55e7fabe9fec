import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ReadKind } from './read-consistency.ts';

/**
 * The table as the store's own helpers (role catalog, filter packs) reach it: the client, the table's name and the
 * bounded batch read. The store is one; naming this much apart keeps the helpers below the store that uses them.
 */
export interface TableClient {
  readonly db: DynamoDBDocumentClient;
  readonly tableName: string;
  batchGet(
    itemKeys: readonly Record<string, unknown>[],
    projection?: string,
    read?: ReadKind,
  ): Promise<Record<string, unknown>[]>;
}

/** Whether a request failed only because its condition did not hold (nothing was written). */
export function isConditionFailure(error: unknown): boolean {
  return (error as { name?: string }).name === 'ConditionalCheckFailedException';
}

/** A conditional request's output, or undefined when its condition did not hold; other failures are thrown. */
export async function unlessConditionFails<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Whether a transaction was cancelled because one of its items' conditions did not hold (nothing was written). */
export function isTransactionConditionFailure(error: unknown): boolean {
  return (
    error instanceof TransactionCanceledException &&
    (error.CancellationReasons ?? []).some((reason) => reason.Code === 'ConditionalCheckFailed')
  );
}

/** A transaction's output, or undefined when a condition of it did not hold; other failures are thrown. */
export async function unlessTransactionConditionFails<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    if (isTransactionConditionFailure(error)) return undefined;
    throw error;
  }
}
