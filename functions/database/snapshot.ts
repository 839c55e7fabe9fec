import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBackupCommand } from '@aws-sdk/client-dynamodb';
import { PutCommand, paginateScan } from '@aws-sdk/lib-dynamodb';
import { ApiError } from '#shared/errors/api-error.ts';
import { INTEGRITY_PREFIX } from '#shared/integrity/scan-segment.ts';
import type { Deps } from '#shared/ports/deps.ts';

const SNAPSHOT_KEY = { PK: `${INTEGRITY_PREFIX}snapshot`, SK: 'LAST' };
/** At most one snapshot a minute: each is a whole-table backup or export. */
const SNAPSHOT_INTERVAL_MS = 60_000;

/** Claims this minute's snapshot (a conditional write), or refuses with 429 `RATE_LIMITED`. */
async function claimSnapshot(deps: Deps, at: Date): Promise<void> {
  try {
    await deps.store.db.send(
      new PutCommand({
        TableName: deps.store.tableName,
        Item: { ...SNAPSHOT_KEY, at: at.toISOString() },
        ConditionExpression: 'attribute_not_exists(PK) OR #at < :earliest',
        ExpressionAttributeNames: { '#at': 'at' },
        ExpressionAttributeValues: { ':earliest': new Date(at.getTime() - SNAPSHOT_INTERVAL_MS).toISOString() },
      }),
    );
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
    throw new ApiError('RATE_LIMITED', { message: 'A database snapshot was taken less than a minute ago.' });
  }
}

/** The name a snapshot takes from its time: sortable, and valid as a backup name and a file name. */
export function snapshotName(at: Date): string {
  return `ziti-controller-${at.toISOString().replace(/[:.]/g, '-')}`;
}

/** Writes every item of the table, one JSON object a line, paged (the table is never held in memory). */
async function exportTable(deps: Deps, file: string): Promise<void> {
  const out = createWriteStream(file, { mode: 0o600 });
  const done = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  for await (const page of paginateScan({ client: deps.store.db }, { TableName: deps.store.tableName })) {
    for (const item of page.Items ?? []) {
      if (!out.write(`${JSON.stringify(item)}\n`))
        await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
  }
  out.end();
  await done;
}

/**
 * `POST /database/snapshot`: in AWS an on-demand DynamoDB backup named with the time; locally a JSON Lines export
 * in the data directory (`npm run restore-snapshot` loads one into a table).
 */
export async function createSnapshot(deps: Deps): Promise<string> {
  const at = deps.now();
  await claimSnapshot(deps, at);
  const name = snapshotName(at);
  const target = deps.config.snapshots;
  if (target.kind === 'backup') {
    await deps.store.db.send(new CreateBackupCommand({ TableName: deps.store.tableName, BackupName: name }));
    return name;
  }
  await mkdir(target.directory, { recursive: true, mode: 0o700 });
  const file = join(target.directory, `${name}.jsonl`);
  await exportTable(deps, file);
  return file;
}
