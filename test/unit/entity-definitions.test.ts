import { describe, expect, it } from 'vitest';
import { ENTITY_DEFINITIONS } from '#shared/entities/definitions.ts';

/** What every entity declaration must keep to, beyond what its types enforce. */
describe('entity declarations', () => {
  it("carry on their unique markers no field named like the marker's own attributes", () => {
    // Any field read returns a string, so every field a declaration carries shows up.
    const anyDoc = new Proxy({}, { get: (_, field) => `value-of-${String(field)}` });
    const carrying = ENTITY_DEFINITIONS.filter((def) => def.markerCarries);
    expect(carrying.length).toBeGreaterThan(0);
    for (const def of carrying) {
      const carried = Object.keys(def.markerCarries!(anyDoc as never));
      expect(
        carried.filter((field) => ['PK', 'SK', 'entityId'].includes(field)),
        def.collection,
      ).toEqual([]);
    }
  });
});
