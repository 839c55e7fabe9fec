import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';
import { expectCouldNotValidate } from '../support/expect-could-not-validate.ts';
import { M } from '../support/management-fixtures.ts';

const { controller, admin, call } = useAdminController();

// Fragments of the filter grammar glued at random reach far deeper into the parser than random text alone.
const filterFragment = fc.constantFrom(
  'name',
  'roleAttributes',
  'tags.env',
  'isAdmin',
  'createdAt',
  ' = ',
  ' != ',
  ' contains ',
  ' icontains ',
  ' in ',
  ' between ',
  ' and ',
  ' or ',
  'not ',
  '(',
  ')',
  '[',
  ']',
  ',',
  '"x"',
  '"',
  '\\',
  '1',
  '-2.5e3',
  'true',
  'null',
  'datetime(2024-01-01T00:00:00Z)',
  'anyOf(',
  'allOf(',
  'isEmpty(',
  'count(',
  ' sort by ',
  ' asc',
  ' desc',
  ' skip ',
  ' limit ',
  'none',
  ' ',
  '\n',
  "'",
  '#',
  '@',
);
const filterText = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.array(filterFragment, { maxLength: 14 }).map((parts) => parts.join('')),
);

// 150 requests each: a few seconds on a quiet machine, but more than the default 30 s when the machine is loaded.
const MANY_REQUESTS_TIMEOUT_MS = 120_000;

describe('no input makes the controller fail', () => {
  it(
    'answers every filter string with 200 or a 400 in the error envelope',
    async () => {
      await fc.assert(
        fc.asyncProperty(filterText, async (text) => {
          const response = await controller().call('GET', `${M}/identities?filter=${encodeURIComponent(text)}`, {
            token: admin(),
          });
          expect([200, 400]).toContain(response.status);
          if (response.status === 400)
            expect(response.body.error.code).toMatch(/^INVALID_FILTER$|^INVALID_SORT_IDENTIFIER$/);
        }),
        { numRuns: 150 },
      );
    },
    MANY_REQUESTS_TIMEOUT_MS,
  );

  it(
    'answers every JSON body to POST /identities with 201 or a 400 naming a field',
    async () => {
      const value = fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
      );
      const body = fc.record(
        {
          name: value,
          type: fc.oneof(value, fc.constantFrom('User', 'Device', 'Router')),
          isAdmin: fc.oneof(value, fc.boolean()),
          roleAttributes: value,
          authPolicyId: value,
          tags: fc.oneof(value, fc.dictionary(fc.string({ maxLength: 4 }), value, { maxKeys: 2 })),
          enrollment: fc.oneof(value, fc.record({ ott: value, updb: value }, { requiredKeys: [] })),
          defaultHostingCost: value,
        },
        { requiredKeys: [] },
      );
      await fc.assert(
        fc.asyncProperty(fc.oneof(body, value), async (sent) => {
          const response = await call('POST', '/identities', sent);
          expect([201, 400]).toContain(response.status);
          if (response.status === 400) expect(typeof response.body.error.cause.field).toBe('string');
        }),
        { numRuns: 150 },
      );
    },
    MANY_REQUESTS_TIMEOUT_MS,
  );
});

describe('values longer than any stored key', () => {
  // DynamoDB refuses keys over 2,048 (partition) or 1,024 (sort) bytes; such values can match nothing stored.
  const long = 'x'.repeat(3000);

  it('answers 404 for an id that long', async () => {
    for (const path of [`${M}/identities/${long}`, `${M}/api-sessions/${long}`, `${M}/authenticators/${long}`]) {
      const response = await controller().call('GET', path, { token: admin() });
      expect(response.status, path).toBe(404);
    }
  });

  it('finds nothing for filters and role filters on such values', async () => {
    for (const query of [
      `filter=${encodeURIComponent(`name = "${long}"`)}`,
      `filter=${encodeURIComponent(`id in ["${long}"]`)}`,
      `roleFilter=${encodeURIComponent(`#${long}`)}`,
      `roleFilter=${encodeURIComponent(`@${long}`)}`,
      // The same id twice once made a batch read with duplicate keys, which DynamoDB refuses.
      `roleFilter=${encodeURIComponent('@no-such-id')}&roleFilter=${encodeURIComponent('@no-such-id')}`,
    ]) {
      const response = await call('GET', `/identities?${query}`);
      expect(response.status, query.slice(0, 30)).toBe(200);
      expect(response.body.data).toEqual([]);
    }
  });

  it('answers 400 naming the field for references that long', async () => {
    const response = await call('POST', '/identities', {
      name: 'long-ref',
      type: 'User',
      isAdmin: false,
      authPolicyId: long,
    });

    expectCouldNotValidate(response, 'authPolicyId', { api: 'management', method: 'POST', path: '/identities' });
  });
});
