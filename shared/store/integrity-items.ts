import { BatchWriteCommand, GetCommand, PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import type { Store } from './entity-store.ts';
import { keys } from './keys.ts';
import { readOptions } from './read-consistency.ts';
import { unlessConditionFails } from './table-client.ts';

/**
 * The integrity run's items (`shared/integrity/integrity-run.ts` holds what they mean), under the prefix the scan
 * skips: one status item, which is also the single-run lock, and each run's findings in a partition of their own.
 */

const STATUS_KEY = keys.integrity('status');

/** The status item's fields, without its key; undefined before the first run. */
export async function readIntegrityStatusItem(store: Store): Promise<Record<string, unknown> | undefined> {
  const { Item } = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: STATUS_KEY, ...readOptions('integrityStatus') }),
  );
  if (!Item) return undefined;
  const { PK: _pk, SK: _sk, ...fields } = Item;
  return fields;
}

/**
 * Writes the status of a run starting now, if no run holds the lock: none ever ran, the last one ended, or its lock
 * (`lockedUntil`) is older than `now`. False when another run holds it.
 */
export async function takeIntegrityStatus(
  store: Store,
  status: Record<string, unknown> & { readonly runId: string; readonly lockedUntil: string },
  now: string,
): Promise<boolean> {
  const written = await unlessConditionFails(
    store.db.send(
      new PutCommand({
        TableName: store.tableName,
        Item: { ...status, ...STATUS_KEY, inProgress: true },
        ConditionExpression: 'attribute_not_exists(PK) OR inProgress = :false OR lockedUntil < :now',
        ExpressionAttributeValues: { ':false': false, ':now': now },
      }),
    ),
  );
  return written !== undefined;
}

/** Replaces the status item with `status`, only while run `runId` still holds it. False when it does not. */
export async function replaceIntegrityStatus(
  store: Store,
  runId: string,
  status: Record<string, unknown>,
): Promise<boolean> {
  const written = await unlessConditionFails(
    store.db.send(
      new PutCommand({
        TableName: store.tableName,
        Item: { ...status, runId, ...STATUS_KEY },
        ConditionExpression: 'runId = :runId',
        ExpressionAttributeValues: { ':runId': runId },
      }),
    ),
  );
  return written !== undefined;
}

/** A run's finding as stored. */
export interface StoredFinding {
  readonly description: string;
  readonly fixed: boolean;
}

/** Stores one segment's findings under the run, in order, until DynamoDB's TTL takes them at `expiresAtEpoch`. */
export async function putSegmentFindings(
  store: Store,
  run: { readonly runId: string; readonly segment: number },
  findings: readonly StoredFinding[],
  expiresAtEpoch: number,
): Promise<void> {
  const items = findings.map((finding, index) => ({
    PK: keys.integrityFindings(run.runId),
    SK: `${String(run.segment).padStart(4, '0')}#${String(index).padStart(5, '0')}`,
    ...finding,
    expiresAtEpoch,
  }));
  for (let i = 0; i < items.length; i += 25) {
    let requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) {
      const { UnprocessedItems } = await store.db.send(
        new BatchWriteCommand({ RequestItems: { [store.tableName]: requests } }),
      );
      requests = (UnprocessedItems?.[store.tableName] ?? []) as typeof requests;
    }
  }
}

/** Up to `limit` of the run's findings, in segment order. */
export async function runFindings(store: Store, runId: string, limit: number): Promise<StoredFinding[]> {
  const found: StoredFinding[] = [];
  const query = {
    TableName: store.tableName,
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': keys.integrityFindings(runId) },
    Limit: limit,
  };
  for await (const page of paginateQuery({ client: store.db }, query)) {
    for (const item of page.Items ?? [])
      found.push({ description: String(item.description), fixed: item.fixed === true });
    if (found.length >= limit) break;
  }
  return found.slice(0, limit);
}
