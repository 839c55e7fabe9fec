import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import type { BaseDocument } from '#shared/entities/entity-definition.ts';
import { identities } from '#shared/entities/identity.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { keys } from '#shared/store/keys.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { type SeededCollection, seededCreateWrites } from './seed-entities.ts';
import { SEED_CONCURRENCY, seededIdentity, seedIndexes } from './seed-identities.ts';

/** DynamoDB's limit of puts per BatchWriteItem. */
const BATCH_ITEMS = 25;
const BATCHES_IN_FLIGHT = 8;
/** Creates built at once before their items are written (bounds the memory a large seeding holds). */
const CHUNK = 5_000;

type PutRequest = { PutRequest: { Item: Record<string, unknown> } };

/** What a chunk of creates writes: the items their transactions put and the counters' deltas. */
interface BulkWrites {
  readonly puts: PutRequest[];
  readonly counted: Map<string, number>;
}

/** The items a transaction's Puts write; conditions and checks only guard against conflicts, which seeding has none of. */
function gather(ops: readonly WriteOp[], into: BulkWrites): void {
  for (const { item, counter, changeMarker } of ops) {
    if (counter) into.counted.set(counter.collection, (into.counted.get(counter.collection) ?? 0) + counter.delta);
    // Nobody polls for changes while the bench seeds.
    else if (changeMarker !== undefined) continue;
    else if (item.Put?.Item) into.puts.push({ PutRequest: { Item: item.Put.Item } });
    else if (!item.ConditionCheck) throw new Error(`cannot seed in bulk: ${JSON.stringify(item).slice(0, 200)}`);
  }
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

/** Writes what `gather` collected: the items in batches, then the counters raised. */
async function write(deps: Deps, writes: BulkWrites): Promise<void> {
  const { tableName, db } = deps.store;
  const batches = Array.from({ length: Math.ceil(writes.puts.length / BATCH_ITEMS) }, (_, batch) =>
    writes.puts.slice(batch * BATCH_ITEMS, (batch + 1) * BATCH_ITEMS),
  );
  await mapBounded(batches, BATCHES_IN_FLIGHT, (batch) => writeBatch(deps, batch));
  for (const [collection, delta] of writes.counted) {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: keys.counter(collection, 0),
        UpdateExpression: 'ADD #count :delta',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':delta': delta },
      }),
    );
  }
}

/** Builds each chunk's writes with `opsOf` and writes them. */
async function seedInChunks(
  deps: Deps,
  from: number,
  to: number,
  opsOf: (index: number) => Promise<readonly WriteOp[]> | readonly WriteOp[],
): Promise<void> {
  for (let start = from; start < to; start += CHUNK) {
    const writes: BulkWrites = { puts: [], counted: new Map() };
    const ops = await mapBounded(seedIndexes(start, Math.min(to, start + CHUNK)), SEED_CONCURRENCY, opsOf);
    for (const each of ops) gather(each, writes);
    await write(deps, writes);
  }
}

/**
 * Seeds identities `from` to `to` (exclusive) as `seedIdentities` does but several times faster: the items a create's
 * transaction puts are written in batches and the type's counter is raised once. Call it after `seedIdentities` has
 * seeded some: role attributes enter the role catalog after a create commits, which this leaves out.
 */
export async function seedIdentitiesInBulk(deps: Deps, from: number, to: number): Promise<void> {
  const now = deps.now().toISOString();
  await seedInChunks(deps, from, to, (index) => deps.store.createOps(identities, seededIdentity(index, now)));
}

/**
 * Seeds entities of a collection `from` to `to` (exclusive) in bulk, each document and its extra writes built by its
 * API's own create (as `seedEntities` does), the items written in batches. As for identities, seed some one by one
 * first so their role attributes are in the role catalog.
 */
export async function seedEntitiesInBulk<D extends BaseDocument, C>(
  deps: Deps,
  api: EntityApi<D, C, unknown, unknown>,
  collection: SeededCollection<C>,
  from: number,
  to: number,
): Promise<void> {
  await seedInChunks(deps, from, to, seededCreateWrites(deps, api, collection));
}
