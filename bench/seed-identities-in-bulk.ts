import { BatchWriteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { identities } from '#shared/entities/identity.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { keys } from '#shared/store/keys.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { seededIdentity } from './seed-identities.ts';

/** DynamoDB's limit of puts per BatchWriteItem. */
const BATCH_ITEMS = 25;
const BATCHES_IN_FLIGHT = 8;

type PutRequest = { PutRequest: { Item: Record<string, unknown> } };

/** The item a transaction's Put writes; conditions and checks only guard against conflicts, which seeding has none of. */
function putsOf(
  ops: readonly WriteOp[],
  packs: Map<string, Record<string, unknown>>,
): { puts: PutRequest[]; counted: number } {
  const puts: PutRequest[] = [];
  let counted = 0;
  for (const { item, counter, changeMarker, filterPack } of ops) {
    if (counter) counted += counter.delta;
    // Nobody polls for changes while the bench seeds.
    else if (changeMarker !== undefined) continue;
    else if (filterPack) {
      // Records are gathered per pack and written once each, after the entities.
      const pack = packs.get(filterPack.bucket) ?? {};
      pack[`r:${filterPack.id}`] = filterPack.json;
      packs.set(filterPack.bucket, pack);
    } else if (item.Put?.Item) puts.push({ PutRequest: { Item: item.Put.Item } });
    else if (!item.ConditionCheck) throw new Error(`cannot seed in bulk: ${JSON.stringify(item).slice(0, 200)}`);
  }
  return { puts, counted };
}

async function writeBatch(deps: Deps, puts: PutRequest[]): Promise<void> {
  let pending: PutRequest[] = puts;
  while (pending.length > 0) {
    const result = await deps.store.db.send(
      new BatchWriteCommand({ RequestItems: { [deps.store.tableName]: pending } }),
    );
    pending = (result.UnprocessedItems?.[deps.store.tableName] as PutRequest[] | undefined) ?? [];
  }
}

/**
 * Seeds identities `from` to `to` (exclusive) as `seedIdentities` does but several times faster: the items a create's
 * transaction puts are written in batches and the type's counter is raised once. Call it after `seedIdentities` has
 * seeded some: role attributes enter the role catalog after a create commits, which this leaves out.
 */
export async function seedIdentitiesInBulk(deps: Deps, from: number, to: number): Promise<void> {
  const now = deps.now().toISOString();
  const puts: PutRequest[] = [];
  const packs = new Map<string, Record<string, unknown>>();
  let counted = 0;
  for (let index = from; index < to; index++) {
    const seeded = putsOf(deps.store.createOps(identities, seededIdentity(index, now)), packs);
    puts.push(...seeded.puts);
    counted += seeded.counted;
  }
  const batches = Array.from({ length: Math.ceil(puts.length / BATCH_ITEMS) }, (_, batch) =>
    puts.slice(batch * BATCH_ITEMS, (batch + 1) * BATCH_ITEMS),
  );
  await mapBounded(batches, BATCHES_IN_FLIGHT, (batch) => writeBatch(deps, batch));
  // Each pack merged with what creates already put in it.
  await mapBounded([...packs], BATCHES_IN_FLIGHT, async ([bucket, records]) => {
    const key = keys.filterPack(identities.collection, bucket);
    const { Item } = await deps.store.db.send(
      new GetCommand({ TableName: deps.store.tableName, Key: key, ConsistentRead: true }),
    );
    await deps.store.db.send(
      new PutCommand({ TableName: deps.store.tableName, Item: { ...Item, ...records, ...key } }),
    );
  });
  await deps.store.db.send(
    new UpdateCommand({
      TableName: deps.store.tableName,
      Key: keys.counter(identities.collection, 0),
      UpdateExpression: 'ADD #count :delta',
      ExpressionAttributeNames: { '#count': 'count' },
      ExpressionAttributeValues: { ':delta': counted },
    }),
  );
}
