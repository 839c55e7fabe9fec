import { describe, expect, it } from 'vitest';
import { ENTITY_DEFINITIONS } from '#shared/entities/definitions.ts';
import type { Store } from '#shared/store/entity-store.ts';
import { allOfType } from '#shared/store/index-queries.ts';

describe('types read whole', () => {
  it('are exactly the posture checks and the config types: the only documents in the type index', () => {
    expect(
      ENTITY_DEFINITIONS.filter((def) => def.readWhole)
        .map((def) => def.collection)
        .sort(),
    ).toEqual(['config-types', 'posture-checks']);
  });

  it('refuses to read whole a type whose documents are not in the type index, before any request', async () => {
    const services = ENTITY_DEFINITIONS.find((def) => def.collection === 'services')!;
    const untouched = new Proxy({} as Store, {
      get: () => {
        throw new Error('the store was used');
      },
    });
    await expect(allOfType(untouched, services)).rejects.toThrow(/services are not read whole/);
  });
});
