import { describe, expect, it } from 'vitest';
import { edgeRouterPolicies, serviceEdgeRouterPolicies, servicePolicies } from '#shared/entities/policies.ts';

/**
 * A selection item keeps its policy's record as a JSON array of the `recordFields` values, by position: every item
 * stored reads by this order. Changing a record's fields or their order is a change of the table's layout (its
 * stored selection items must be rewritten by the integrity fix before readers trust their positions), so it has to
 * be deliberate: this test names the order each kind's items are stored in.
 */
describe('the layout of policy selection records', () => {
  it('keeps each policy kind’s record fields in the order its stored items use', () => {
    expect(servicePolicies.selects?.recordFields).toEqual([
      'semantic',
      'type',
      'identityRoles',
      'serviceRoles',
      'postureCheckRoles',
    ]);
    expect(edgeRouterPolicies.selects?.recordFields).toEqual(['semantic', 'identityRoles', 'edgeRouterRoles']);
    expect(serviceEdgeRouterPolicies.selects?.recordFields).toEqual(['semantic', 'serviceRoles', 'edgeRouterRoles']);
  });
});
