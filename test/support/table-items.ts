import { ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import type { Deps } from '#shared/ports/deps.ts';

/** Every page of a scan of the controller's table (only counts with `select: 'COUNT'`). */
async function* scanPages(deps: Deps, select?: 'COUNT'): AsyncGenerator<ScanCommandOutput> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await deps.store.db.send(
      new ScanCommand({
        TableName: deps.store.tableName,
        ExclusiveStartKey: start,
        ...(select ? { Select: select } : {}),
      }),
    );
    yield page;
    start = page.LastEvaluatedKey;
  } while (start);
}

/** Every item of the controller's table, all pages read (for asserting what a request wrote, or never wrote). */
export async function tableItems(deps: Deps): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const page of scanPages(deps)) items.push(...(page.Items ?? []));
  return items;
}

/** How many items the controller's table holds, all pages counted. */
export async function tableItemCount(deps: Deps): Promise<number> {
  let count = 0;
  for await (const page of scanPages(deps, 'COUNT')) count += page.Count ?? 0;
  return count;
}
