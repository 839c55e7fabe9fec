import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { type DerivedKind, registerDerivedKind } from '#shared/store/derived-items.ts';
import { useAdminController } from '../support/admin-controller.ts';
import { integrityRun } from '../support/integrity.ts';

/**
 * One registry says which items an entity implies: a kind added to it is written by the kit's create, replace and
 * delete, and checked (and repaired) by the integrity scan, with no other code told about it.
 */
const ECHO = 'NAME-ECHO#';

/** A made-up kind: every service implies an item echoing its name. */
const nameEcho: DerivedKind = {
  name: 'name echo',
  itemsOf: (def, doc) =>
    def.collection === 'services'
      ? [
          {
            kind: nameEcho,
            item: { PK: `${ECHO}${def.collection}`, SK: doc.id, name: (doc as { name?: unknown }).name },
            compared: ['name'],
          },
        ]
      : [],
  ownerOf: (item) =>
    String(item.PK).startsWith(ECHO)
      ? { collection: String(item.PK).slice(ECHO.length), id: String(item.SK) }
      : undefined,
};

const unregister = registerDerivedKind(nameEcho);
afterAll(unregister);

const { controller, call, createdId } = useAdminController();

const db = () => controller().deps.store.db;
const TableName = () => controller().deps.config.tableName;
const echoOf = async (id: string) =>
  (await db().send(new GetCommand({ TableName: TableName(), Key: { PK: `${ECHO}services`, SK: id } }))).Item;
const descriptions = async (mode: 'check' | 'fix') =>
  (await integrityRun(controller().deps, mode)).map(
    (finding) => `${finding.fixed ? 'fixed: ' : ''}${finding.description}`,
  );

describe('a derived item kind added to the registry', () => {
  it('is written by create, replace and delete, and checked and repaired by the integrity scan', async () => {
    const id = await createdId('/services', { name: 'echoed' });
    expect(await echoOf(id)).toMatchObject({ name: 'echoed' });

    expect((await call('PATCH', `/services/${id}`, { name: 'renamed' })).status).toBe(200);
    expect(await echoOf(id)).toMatchObject({ name: 'renamed' });
    expect(await descriptions('check')).toEqual([]);

    // Missing: found by the check, put back by the fix.
    await db().send(new DeleteCommand({ TableName: TableName(), Key: { PK: `${ECHO}services`, SK: id } }));
    expect(await descriptions('check')).toEqual([`service ${id}: its name echo ${ECHO}services / ${id} is missing`]);
    expect(await descriptions('fix')).toEqual([
      `fixed: service ${id}: its name echo ${ECHO}services / ${id} is missing`,
    ]);
    expect(await echoOf(id)).toMatchObject({ name: 'renamed' });

    // Out of date, and one left by a service that does not exist: both found, both repaired.
    await db().send(new PutCommand({ TableName: TableName(), Item: { PK: `${ECHO}services`, SK: id, name: 'stale' } }));
    await db().send(
      new PutCommand({ TableName: TableName(), Item: { PK: `${ECHO}services`, SK: 'ghost', name: 'x' } }),
    );
    expect((await descriptions('check')).sort()).toEqual(
      [
        `service ${id}: its name echo ${ECHO}services / ${id} is out of date`,
        `${ECHO}services / ghost belongs to services ghost, which does not exist`,
      ].sort(),
    );
    expect((await descriptions('fix')).every((description) => description.startsWith('fixed: '))).toBe(true);
    expect(await echoOf(id)).toMatchObject({ name: 'renamed' });
    expect(await echoOf('ghost')).toBeUndefined();
    expect(await descriptions('check')).toEqual([]);

    expect((await call('DELETE', `/services/${id}`)).status).toBe(200);
    expect(await echoOf(id)).toBeUndefined();
  }, 60_000);
});
