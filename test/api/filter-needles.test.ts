import type { QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { recordSent } from '../support/dynamodb-recorder.ts';

/**
 * A list filter that pins nothing reads its type's filter records; its `contains` needles go to DynamoDB with the
 * read, so only records holding them come back (`requiredSubstrings`, `filterRecords`). The list must answer exactly
 * what the filter matches whatever the needle holds (characters JSON escapes, non-ASCII, a number, letters under
 * `icontains`), and the records sent back must be the few that can match, not the type.
 */
const { controller, call, createdId } = useAdminController();

const NAMES = [
  'nd-plain-alpha',
  'nd-quote"inside',
  'nd-back\\slash',
  'nd-tab\tname',
  'nd-üñíçødé',
  'nd-emoji-😀-face',
  'nd-NUMBER-12345',
  'nd-MiXeD-Case',
] as const;

/** The names a filter lists among the services named `nd-…`, sorted. */
async function namesListed(filter: string): Promise<string[]> {
  const response = await call('GET', `/services?filter=${encodeURIComponent(filter)}&limit=500`);
  expect(response.status, response.text).toBe(200);
  return (response.body.data as { name: string }[]).map((service) => service.name).sort();
}

/** A ZitiQL string literal of `text`. */
const literal = (text: string) => JSON.stringify(text);

/** Items the table's queries read and sent back while `run` ran. */
async function queried(run: () => Promise<unknown>): Promise<{ scanned: number; returned: number }> {
  const queries = (await recordSent(controller().deps.store.db, run)).filter(
    ({ command }) => command === 'QueryCommand',
  );
  const total = (field: 'ScannedCount' | 'Count') =>
    queries.reduce((sum, { output }) => sum + Number((output as QueryCommandOutput | undefined)?.[field] ?? 0), 0);
  return { scanned: total('ScannedCount'), returned: total('Count') };
}

describe('list filters that pin nothing', () => {
  it('answer exactly what `contains` matches, whatever the needle holds', async () => {
    for (const [i, name] of NAMES.entries()) {
      await createdId('/services', { name, tags: { shelf: i % 2 === 0 ? 'even-shelf' : 'odd' } });
    }
    for (let i = 0; i < 40; i++) await createdId('/services', { name: `nd-filler-${i}` });

    const cases: [string, string[]][] = [
      [`name contains ${literal('quote"in')}`, ['nd-quote"inside']],
      [`name contains ${literal('back\\sl')}`, ['nd-back\\slash']],
      [`name contains ${literal('tab\tna')}`, ['nd-tab\tname']],
      [`name contains ${literal('ñíçø')}`, ['nd-üñíçødé']],
      [`name contains ${literal('😀')}`, ['nd-emoji-😀-face']],
      ['name contains 2345', ['nd-NUMBER-12345']],
      // icontains with letters sends no needle; without, the needle as written.
      [`name icontains ${literal('mixed-CASE')}`, ['nd-MiXeD-Case']],
      [`name icontains ${literal('-12345')}`, ['nd-NUMBER-12345']],
      // Every needle of an `and`, a map entry's needle; `or` and `not` send none.
      [
        `name contains "nd-" and tags.shelf contains "even"`,
        ['nd-plain-alpha', 'nd-back\\slash', 'nd-üñíçødé', 'nd-NUMBER-12345'],
      ],
      [`name contains "alpha" or name contains "slash"`, ['nd-back\\slash', 'nd-plain-alpha']],
      [`name contains "nd-" and name not contains "filler"`, [...NAMES]],
      // A needle that only the JSON of another field holds: the filter still decides.
      [`name contains "even-shelf"`, []],
    ];
    for (const [filter, expected] of cases) {
      expect(await namesListed(filter), filter).toEqual([...expected].sort());
    }
  });

  it('send back only the records that hold the needles, not the whole type', async () => {
    for (let i = 0; i < 60; i++) await createdId('/services', { name: `nd-many-${String(i).padStart(2, '0')}` });
    const narrow = await queried(() => namesListed('name contains "nd-many-4"'));
    const wide = await queried(() => namesListed('name contains "nd-many-4" or name contains "nd-many-4"'));
    // Both read every record of the type; the first has 10 sent back, the second (no needle under `or`) all.
    expect(narrow.scanned).toBe(wide.scanned);
    expect(wide.returned).toBe(wide.scanned);
    expect(narrow.returned).toBe(10);
  });
});
