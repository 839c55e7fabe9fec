import { type DynamoDBDocumentClient, GetCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { type Service, services } from '#shared/entities/service.ts';
import { newId } from '#shared/ids.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import { itemSizeBytes, writeUnitsOf } from '../../bench/item-size.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { recordSent } from '../support/dynamodb-recorder.ts';

/**
 * A create's and an update's writes cost the same however many entities of their type exist: every item their
 * transaction writes is the entity's own (no item shared by the type that grows with it, as filter packs did). The
 * figures are the items as stored after the write, by AWS's size rule (`bench/item-size.ts`): their bytes, and the
 * write units they take (a unit per started KB of each, doubled inside a transaction), at 100 and at 3,000
 * services, seeded in bulk through the store's own create writes.
 */

const { controller, call, createdId } = useAdminController();

const SMALL = 100;
const LARGE = 3_000;
/** Creates seeded in one transaction: a service's create writes a handful of items, a transaction takes 100. */
const CREATES_PER_SEED = 16;
/** Tags in the shape and size a real network's carry, so filter records weigh what they would. */
const tagsOf = (index: number) => ({
  owner: `team-${index % 7}`,
  purpose: 'x'.repeat(120),
  site: `site-${index % 11}`,
});

type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

/**
 * Seeds services `from` to `to` (exclusive) through the store's own create writes, many creates to a transaction
 * (the store merges what they share), so whatever the layout keeps per type is seeded as real creates keep it.
 */
async function seedServices(from: number, to: number): Promise<void> {
  const { store } = controller().deps;
  const now = new Date().toISOString();
  const docs: Service[] = [];
  for (let index = from; index < to; index++) {
    docs.push({
      id: newId(),
      createdAt: now,
      updatedAt: now,
      tags: tagsOf(index),
      name: `seeded-${String(index).padStart(6, '0')}`,
      configs: [],
      encryptionRequired: true,
      maxIdleTimeMillis: 0,
      roleAttributes: [],
      terminatorStrategy: 'smartrouting',
    });
  }
  const chunks = Array.from({ length: Math.ceil(docs.length / CREATES_PER_SEED) }, (_, at) =>
    docs.slice(at * CREATES_PER_SEED, (at + 1) * CREATES_PER_SEED),
  );
  await mapBounded(chunks, 4, (chunk) => store.transact(chunk.flatMap((doc) => store.createOps(services, doc))));
}

/** The items of the transactions the store sends while `run` runs. */
async function transactionsOf(db: DynamoDBDocumentClient, run: () => Promise<unknown>): Promise<TransactItems> {
  return (await recordSent(db, run))
    .filter(({ command }) => command === 'TransactWriteItemsCommand')
    .flatMap(({ input }) => (input as TransactWriteCommandInput).TransactItems ?? []);
}

/** What the transactions of `run` wrote: each written item as stored now, by kind of item. */
async function written(run: () => Promise<unknown>) {
  const { store } = controller().deps;
  const items = await transactionsOf(store.db, run);
  const writtenKeys = items.flatMap((item) => {
    const key = item.Put?.Item ?? item.Update?.Key;
    return key ? [{ PK: key.PK as string, SK: key.SK as string }] : [];
  });
  const stored = await Promise.all(
    writtenKeys.map(async (Key) => {
      const { Item } = await store.db.send(new GetCommand({ TableName: store.tableName, Key, ConsistentRead: true }));
      return { kind: Key.PK.split('#')[0]!, bytes: Item ? itemSizeBytes(Item) : 0 };
    }),
  );
  return {
    items: stored.length,
    bytes: stored.reduce((sum, item) => sum + item.bytes, 0),
    // Inside a transaction each item's units are doubled (prepare and commit).
    units: stored.reduce((sum, item) => sum + 2 * writeUnitsOf(item.bytes), 0),
    largest: Math.max(...stored.map((item) => item.bytes)),
  };
}

/** A create and an update of a service through the API, with what each wrote. */
async function createAndUpdate(run: number) {
  let id = '';
  const create = await written(async () => {
    id = await createdId('/services', {
      name: `measured-${run}`,
      roleAttributes: ['measured'],
      tags: tagsOf(run),
      encryptionRequired: true,
    });
  });
  const update = await written(async () => {
    const response = await call('PATCH', `/services/${id}`, { tags: { ...tagsOf(run), changed: 'yes' } });
    expect(response.status).toBe(200);
  });
  return { create, update };
}

describe('write units of creates and updates', () => {
  it(`do not grow from ${SMALL} to ${LARGE} entities of the type`, { timeout: 300_000 }, async () => {
    await seedServices(0, SMALL);
    const few = await createAndUpdate(1);
    await seedServices(SMALL, LARGE);
    const many = await createAndUpdate(2);

    expect(few.create.items).toBeGreaterThan(0);
    expect(few.update.items).toBeGreaterThan(0);
    // The same items, each the same size but for digits (a counter's value): the same units, within a few bytes.
    expect(many.create.items).toBe(few.create.items);
    expect(many.update.items).toBe(few.update.items);
    expect(many.create.units).toBe(few.create.units);
    expect(many.update.units).toBe(few.update.units);
    expect(many.create.bytes).toBeLessThanOrEqual(few.create.bytes * 1.02);
    expect(many.update.bytes).toBeLessThanOrEqual(few.update.bytes * 1.02);
    // No item a write touches is shared by the whole type: the largest is the entity itself.
    expect(many.create.largest).toBe(few.create.largest);
  });
});
