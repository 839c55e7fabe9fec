import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ensureTable } from '#local/create-table.ts';
import { loadConfig } from '#shared/config.ts';
import { createDocumentClient } from '#shared/store/dynamo-client.ts';

/**
 * Loads a local snapshot (`POST /database/snapshot` writes `<data>/snapshots/*.jsonl`, one item a line) into a table,
 * made if missing: `npm run restore-snapshot -- <file> [table]`. Point `DYNAMODB_ENDPOINT` at the DynamoDB to load
 * (`npm start` prints it); restore into a new table, then start the controller with `TABLE_NAME` set to it.
 */
export async function restoreSnapshot(db: DynamoDBDocumentClient, file: string, tableName: string): Promise<number> {
  await ensureTable(db, tableName);
  let batch: Record<string, unknown>[] = [];
  let restored = 0;
  const flush = async () => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
    batch = [];
    while (requests.length > 0) {
      const { UnprocessedItems } = await db.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
    }
  };
  for await (const line of createInterface({
    input: createReadStream(file, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  })) {
    if (line.trim() === '') continue;
    batch.push(JSON.parse(line) as Record<string, unknown>);
    restored++;
    if (batch.length === 25) await flush();
  }
  if (batch.length > 0) await flush();
  return restored;
}

if (import.meta.main) {
  const [file, table] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npm run restore-snapshot -- <snapshot.jsonl> [table name]');
    process.exit(2);
  }
  const config = loadConfig();
  const tableName = table ?? `${config.tableName}-restored`;
  const db = createDocumentClient(config);
  const count = await restoreSnapshot(db, file, tableName);
  console.log(`restored ${count} items into ${tableName}`);
  db.destroy();
}
