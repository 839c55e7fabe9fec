import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idsSelectedAmong, type RoleSelection } from '#shared/policy/reach.ts';
import { selectsEntity } from '#shared/policy/roles.ts';

/**
 * The in-memory selection a session makes over the edge routers' records (and the posture checks) must answer as the
 * reference's match rule does entity by entity: `#all`, `@ids` whatever the semantic, AnyOf and AllOf attributes.
 */
const ATTRIBUTES = ['a', 'b', 'c', 'd'];
const IDS = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'];

const entity = fc.record({
  id: fc.constantFrom(...IDS),
  attributes: fc.uniqueArray(fc.constantFrom(...ATTRIBUTES), { maxLength: 3 }),
});
const role = fc.oneof(
  fc.constantFrom(...ATTRIBUTES).map((attribute) => `#${attribute}`),
  fc.constantFrom(...IDS, 'gone').map((id) => `@${id}`),
);
const selection: fc.Arbitrary<RoleSelection> = fc.record({
  roles: fc.oneof(
    { weight: 1, arbitrary: fc.constant(['#all']) },
    { weight: 6, arbitrary: fc.uniqueArray(role, { maxLength: 4 }) },
  ),
  semantic: fc.constantFrom('AnyOf' as const, 'AllOf' as const),
});

describe('idsSelectedAmong', () => {
  it('selects exactly the entities some selection selects under the match rule', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(entity, { selector: (e) => e.id, maxLength: IDS.length }),
        fc.array(selection, { maxLength: 5 }),
        (entities, selections) => {
          const expected = entities
            .filter((e) => selections.some(({ roles, semantic }) => selectsEntity(roles, semantic, e)))
            .map((e) => e.id)
            .sort();
          expect(idsSelectedAmong(entities, selections)).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});
