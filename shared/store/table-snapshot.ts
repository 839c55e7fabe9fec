import { CreateBackupCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import type { Store } from './entity-store.ts';
import { keys } from './keys.ts';
import { readOptions } from './read-consistency.ts';
import { unlessConditionFails } from './table-client.ts';

/**
 * The table as a whole, for snapshots: the claim that limits them to one an interval, an on-demand DynamoDB backup,
 * and every item in pages (a JSON Lines export locally).
 */

/**
 * Claims the snapshot of this interval: a conditional write of the last snapshot's time that only goes through when
 * none was taken in the `intervalMs` before `at`. False when one was.
 */
export async function claimSnapshot(store: Store, at: Date, intervalMs: number): Promise<boolean> {
  const written = await unlessConditionFails(
    store.db.send(
      new PutCommand({
        TableName: store.tableName,
        Item: { ...keys.integrity('snapshot'), at: at.toISOString() },
        ConditionExpression: 'attribute_not_exists(PK) OR #at < :earliest',
        ExpressionAttributeNames: { '#at': 'at' },
        ExpressionAttributeValues: { ':earliest': new Date(at.getTime() - intervalMs).toISOString() },
      }),
    ),
  );
  return written !== undefined;
}

/** An on-demand DynamoDB backup of the table, named `name`. */
export async function backUpTable(store: Store, name: string): Promise<void> {
  await store.db.send(new CreateBackupCommand({ TableName: store.tableName, BackupName: name }));
}

/** Every item of the table, page by page (the table is never held in memory). */
export async function* tableItems(store: Store): AsyncGenerator<Record<string, unknown>> {
  for await (const page of paginateScan({ client: store.db }, { TableName: store.tableName })) {
    yield* page.Items ?? [];
  }
}

/**
 * One segment of a parallel scan of the whole table, in pages of about `pageSize` items, strongly consistent (the
 * integrity scan compares what it reads with point reads made after).
 */
export async function* segmentPages(
  store: Store,
  segment: { readonly segment: number; readonly totalSegments: number },
  pageSize: number,
): AsyncGenerator<Record<string, unknown>[]> {
  const pages = paginateScan(
    { client: store.db, pageSize },
    {
      TableName: store.tableName,
      Segment: segment.segment,
      TotalSegments: segment.totalSegments,
      ...readOptions('tableScan'),
    },
  );
  for await (const page of pages) yield page.Items ?? [];
}
