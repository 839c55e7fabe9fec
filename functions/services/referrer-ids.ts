import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Deps } from '#shared/deps.ts';
import { keys } from '#shared/store/keys.ts';

/**
 * The ids of the entities of `referrers` that link to an entity (the configs of a config type, the services using a
 * config), from the link items the kit keeps in the target's partition: strongly consistent, and no entity is read.
 */
export async function referrerIds(
  deps: Deps,
  target: { readonly collection: string; readonly id: string },
  referrers: string,
): Promise<string[]> {
  const ids = new Set<string>();
  let start: Record<string, unknown> | undefined;
  do {
    const page = await deps.store.db.send(
      new QueryCommand({
        TableName: deps.store.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: {
          ':pk': keys.entity(target.collection, target.id).PK,
          ':prefix': `REFBY#${referrers}#`,
        },
        ProjectionExpression: 'SK',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    // `REFBY#<collection>#<id>#<field>`
    for (const item of page.Items ?? []) ids.add(String(item.SK).split('#')[2] ?? '');
    start = page.LastEvaluatedKey;
  } while (start);
  ids.delete('');
  return [...ids];
}
