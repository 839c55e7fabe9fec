import { describe, expect, it } from 'vitest';
import { type ItemKind, itemKindOf, keys } from '#shared/store/keys.ts';

describe('the table layout', () => {
  it('names the kind of every item from the key its builder makes, the one reading the integrity scan relies on', () => {
    const built: [ItemKind, { PK: string }][] = [
      ['entity-or-link', keys.entity('services', 'abc')],
      ['unique', keys.unique('services', 'name', 'web')],
      ['idOrder', keys.idOrder('services', 'abc')],
      ['retiredFilterPack', { PK: 'FILTERS#services' }],
      ['counter', keys.counter('services', 3)],
      ['roleMember', keys.roleMember('services', 'web', 'abc')],
      ['roleCatalog', keys.roleCatalog('services', 'web')],
      ['selection', keys.selection('services', '#web', 'service-policies', 'p1')],
      ['changeMarker', keys.changeMarker('service-access')],
      ['apiSession', keys.apiSession('hash')],
      ['entity-or-link', keys.apiSessionPointer('s1')],
      ['postureData', keys.postureData('s1')],
      ['failedRequests', keys.failedRequests('i1')],
      ['rateWindow', keys.rateWindow('login-ip', 'digest', 60_000)],
      ['rememberedAddress', keys.rememberedAddress('login', 'digest')],
      ['ctrlChannel', keys.ctrlChannel('routers', 'r1')],
      ['circuit', keys.circuit('c1')],
      ['link', keys.link('l1')],
      ['system', keys.system('network-ca')],
      ['integrity', keys.integrity('status')],
      ['integrity', { PK: keys.integrityFindings('run-1') }],
    ];
    for (const [kind, key] of built) expect(itemKindOf(key.PK), key.PK).toBe(kind);
  });
});
