import { BatchWriteCommand, DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '#shared/ids.ts';
import { filterRecords } from '#shared/store/filter-records.ts';
import { keys } from '#shared/store/keys.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { recordSent } from '../support/dynamodb-recorder.ts';

/**
 * Lists whose filter pins nothing read the type's filter records from its id-order items
 * (`shared/store/filter-records.ts`: one query, and parallel key ranges past it for a large type) and read only the page's entities: every operator of
 * the filter language must see the fields it names there, paging and totals must be those of the whole filtered
 * type, and the records must follow every create, change and delete.
 */

const { controller, call, createdId } = useAdminController();

/** Service `fr-NN`: fields varied by index so that each filter below has its own answer. */
function serviceBody(index: number) {
  const roles = [[], ['web'], ['web', 'db']][index % 3]!;
  return {
    name: `fr-${String(index).padStart(2, '0')}`,
    encryptionRequired: index % 2 === 0,
    maxIdleTimeMillis: index * 1000,
    roleAttributes: roles,
    tags: { env: index % 4 === 0 ? 'prod' : 'dev' },
    terminatorStrategy: index >= 10 ? 'weighted' : 'smartrouting',
  };
}

const SERVICES = 12;
const all = Array.from({ length: SERVICES }, (_, index) => `fr-${String(index).padStart(2, '0')}`);
const pick = (...indexes: number[]) => indexes.map((index) => all[index]!);

async function list(filter: string, query = 'limit=500') {
  const response = await call('GET', `/services?${query}&filter=${encodeURIComponent(filter)}`);
  expect(response.status, `${filter}: ${JSON.stringify(response.body)}`).toBe(200);
  return {
    names: (response.body.data as { name: string }[]).map((service) => service.name),
    pagination: response.body.meta.pagination as { limit: number; offset: number; totalCount: number },
  };
}

const names = async (filter: string) => (await list(filter)).names.sort();

describe('filter records', () => {
  beforeAll(async () => {
    for (let index = 0; index < SERVICES; index++) await createdId('/services', serviceBody(index));
  });

  it.each([
    ['name contains "fr-0"', pick(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)],
    ['name not contains "fr-0"', pick(10, 11)],
    ['name icontains "FR-1"', pick(10, 11)],
    ['name not icontains "FR-1"', pick(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)],
    ['name != "fr-03"', all.filter((name) => name !== 'fr-03')],
    ['name not in ["fr-00", "fr-01"]', all.slice(2)],
    ['name > "fr-09"', pick(10, 11)],
    ['encryptionRequired = true', pick(0, 2, 4, 6, 8, 10)],
    ['encryptionRequired', pick(0, 2, 4, 6, 8, 10)],
    ['encryptionRequired != true', pick(1, 3, 5, 7, 9, 11)],
    ['maxIdleTimeMillis < 3000', pick(0, 1, 2)],
    ['maxIdleTimeMillis <= 2000', pick(0, 1, 2)],
    ['maxIdleTimeMillis >= 9000', pick(9, 10, 11)],
    ['maxIdleTimeMillis between 2000 and 5000', pick(2, 3, 4)],
    ['maxIdleTimeMillis not between 2000 and 11000', pick(0, 1, 11)],
    ['maxIdleTimeMillis in [1000, 7000]', pick(1, 7)],
    ['anyOf(roleAttributes) = "db"', pick(2, 5, 8, 11)],
    ['allOf(roleAttributes) = "web"', pick(1, 4, 7, 10)],
    ['count(roleAttributes) > 1', pick(2, 5, 8, 11)],
    ['isEmpty(roleAttributes)', pick(0, 3, 6, 9)],
    ['not isEmpty(roleAttributes)', pick(1, 2, 4, 5, 7, 8, 10, 11)],
    ['tags.env = "prod"', pick(0, 4, 8)],
    ['terminatorStrategy = "weighted"', pick(10, 11)],
    ['terminatorStrategy != null', all],
    ['createdAt > datetime(2000-01-01T00:00:00Z)', all],
    ['updatedAt < datetime(2000-01-01T00:00:00Z)', []],
    ['maxIdleTimeMillis > 4000 and not (encryptionRequired = true)', pick(5, 7, 9, 11)],
    ['anyOf(roleAttributes) = "db" or tags.env = "prod"', pick(0, 2, 4, 5, 8, 11)],
    ['true', all],
    ['false', []],
  ])('%s', async (filter, expected) => {
    expect(await names(filter)).toEqual(expected);
  });

  it('pages the filtered, sorted records and counts them all in the pagination meta', async () => {
    expect(await list('name contains "fr-"', 'limit=5&offset=5&sort=name desc')).toEqual({
      names: pick(6, 5, 4, 3, 2),
      pagination: { limit: 5, offset: 5, totalCount: 12 },
    });
    expect(await list('maxIdleTimeMillis >= 3000 sort by maxIdleTimeMillis desc skip 2 limit 3')).toEqual({
      names: pick(9, 8, 7),
      pagination: { limit: 3, offset: 2, totalCount: 9 },
    });
    expect(await list('anyOf(roleAttributes) = "web"', 'limit=3')).toEqual({
      names: expect.any(Array),
      pagination: { limit: 3, offset: 0, totalCount: 8 },
    });
    expect((await list('anyOf(roleAttributes) = "web"', 'limit=3&offset=7')).names).toHaveLength(1);
  });

  it('finds every entity of a type whatever its id, across the parallel key ranges', async () => {
    // Ids from every range of the alphabet, and some that no generated id has (a leading `-`, a range boundary).
    const { store } = controller().deps;
    const { Items = [] } = await store.db.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.idOrder('services', '').PK },
      }),
    );
    expect(Items).toHaveLength(SERVICES);
    const odd = ['2', '-x', 'zz~', 'Y', 'A0'];
    const record = JSON.parse(String(Items[0]!.record)) as Record<string, unknown>;
    for (const id of odd) {
      await store.db.send(
        new PutCommand({
          TableName: store.tableName,
          Item: { ...keys.idOrder('services', id), record: JSON.stringify({ ...record, id, name: `odd-${id}` }) },
        }),
      );
    }
    try {
      const records = await filterRecords(store, 'services');
      expect(records.map((each) => each.id).sort()).toEqual([...Items.map((item) => item.SK), ...odd].sort());
    } finally {
      for (const id of odd) {
        await store.db.send(new DeleteCommand({ TableName: store.tableName, Key: keys.idOrder('services', id) }));
      }
    }
  });

  it('reads a type past its first query (a thousand records) whole: the first query, then the ranges after it', async () => {
    const { store } = controller().deps;
    const collection = 'fr-bulk';
    const boundaries = ['2', '-x', 'zz~', 'Y', 'A0', 'c', 'w', 'wa', '1~'];
    const ids = [...boundaries, ...Array.from({ length: 2_600 }, () => newId())];
    const padding = 'p'.repeat(400);
    for (let at = 0; at < ids.length; at += 25) {
      const batch = ids.slice(at, at + 25).map((id) => ({
        PutRequest: { Item: { ...keys.idOrder(collection, id), record: JSON.stringify({ id, name: id, padding }) } },
      }));
      await store.db.send(new BatchWriteCommand({ RequestItems: { [store.tableName]: batch } }));
    }
    const sent = await recordSent(store.db, async () => {
      const records = await filterRecords(store, collection);
      expect(records.map((record) => record.id).sort()).toEqual([...new Set(ids)].sort());
    });
    const queries = sent.filter(({ command }) => command === 'QueryCommand');
    // One query stopped at its thousand records; the rest read in ranges after it, at once.
    expect(queries.length).toBeGreaterThan(2);
    expect(new Set(queries.map(({ wave }) => wave)).size).toBeLessThanOrEqual(3);
  });

  it('reads a small type in one query', async () => {
    const { store } = controller().deps;
    const sent = await recordSent(store.db, () => filterRecords(store, 'services'));
    expect(sent.map(({ command }) => command)).toEqual(['QueryCommand']);
  });

  it('follow creates, renames and deletes, records of any size included', async () => {
    const small = await createdId('/services', { name: 'record-small' });
    const large = await createdId('/services', { name: 'record-large', tags: { note: 'x'.repeat(5_000) } });
    expect(await names('name contains "record-"')).toEqual(['record-large', 'record-small']);
    expect(await names('tags.note contains "xxxx"')).toEqual(['record-large']);

    await call('PATCH', `/services/${small}`, { name: 'record-renamed' });
    expect(await names('name contains "record-"')).toEqual(['record-large', 'record-renamed']);

    await call('DELETE', `/services/${large}`);
    expect(await names('name contains "record-"')).toEqual(['record-renamed']);
    await call('DELETE', `/services/${small}`);
    expect(await names('name contains "record-"')).toEqual([]);
  });
});
