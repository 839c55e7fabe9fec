import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '#shared/errors/api-error.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { backUpTable, claimSnapshot, tableItems } from '#shared/store/table-snapshot.ts';

/** At most one snapshot a minute: each is a whole-table backup or export. */
const SNAPSHOT_INTERVAL_MS = 60_000;

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
  for await (const item of tableItems(deps.store)) {
    if (!out.write(`${JSON.stringify(item)}\n`))
      await new Promise<void>((resolve) => out.once('drain', () => resolve()));
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
  if (!(await claimSnapshot(deps.store, at, SNAPSHOT_INTERVAL_MS))) {
    throw new ApiError('RATE_LIMITED', { message: 'A database snapshot was taken less than a minute ago.' });
  }
  const name = snapshotName(at);
  const target = deps.config.snapshots;
  if (target.kind === 'backup') {
    await backUpTable(deps.store, name);
    return name;
  }
  await mkdir(target.directory, { recursive: true, mode: 0o700 });
  const file = join(target.directory, `${name}.jsonl`);
  await exportTable(deps, file);
  return file;
}
