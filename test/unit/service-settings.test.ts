import { describe, expect, it } from 'vitest';
import { createServiceSettings, SETTINGS_TTL_MS } from '#ctrl-channel/service-settings.ts';
import type { Service } from '#shared/entities/service.ts';
import type { Store } from '#shared/store/entity-store.ts';

const service = (id: string, maxIdleTimeMillis: number): Service => ({
  id,
  createdAt: '',
  updatedAt: '',
  tags: {},
  name: id,
  configs: [],
  encryptionRequired: true,
  maxIdleTimeMillis,
  roleAttributes: [],
  terminatorStrategy: 'smartrouting',
});

describe("the endpoint's cache of services' settings", () => {
  it('reads a service once per 30 s, not at all after a dial noted it, and reports a gone one as undefined', async () => {
    let nowMs = 0;
    const stored = new Map([['a', service('a', 1_000)]]);
    const reads: string[][] = [];
    const store = {
      getMany: async (_def: unknown, ids: readonly string[]) => {
        reads.push([...ids]);
        return ids.flatMap((id) => stored.get(id) ?? []);
      },
    } as unknown as Store;
    const settings = createServiceSettings({ store, now: () => new Date(nowMs) });

    settings.noted(service('noted', 5));
    const first = await settings.of(['a', 'gone', 'noted', 'a']);
    const again = await settings.of(['a', 'gone']);
    stored.set('a', service('a', 2_000));
    nowMs += SETTINGS_TTL_MS;
    const later = await settings.of(['a', 'noted']);

    expect(first.get('a')).toEqual({ terminatorStrategy: 'smartrouting', maxIdleTimeMillis: 1_000 });
    expect(first.get('noted')?.maxIdleTimeMillis).toBe(5);
    expect(first.has('gone') && first.get('gone')).toBe(undefined);
    expect(again.get('a')?.maxIdleTimeMillis).toBe(1_000);
    expect(later.get('a')?.maxIdleTimeMillis).toBe(2_000);
    expect(reads).toEqual([
      ['a', 'gone'],
      ['a', 'noted'],
    ]);
  });
});
