import { describe, expect, it } from 'vitest';
import { useAdminController } from '../support/admin-controller.ts';

const { call, createdId } = useAdminController();

const REFUSED_TEXTS = [
  ['a comma', 'a,b'],
  ['a NUL', 'a\u0000b'],
  ['a right-to-left override', 'abc\u202Egpj.exe'],
  ['a zero-width space', 'a\u200Bb'],
  ['a line break', 'a\nb'],
  ['a leading space', ' a'],
  ['256 characters', 'x'.repeat(256)],
] as const;

describe('one character rule for role attributes, everywhere they are written', () => {
  it.each(REFUSED_TEXTS)('refuses %s in an entity role attribute and in a policy role', async (_, text) => {
    const identity = await call('POST', '/identities', {
      name: `rules-${Math.random()}`,
      type: 'User',
      isAdmin: false,
      roleAttributes: [text],
    });
    const service = await call('POST', '/services', { name: `rules-${Math.random()}`, roleAttributes: [text] });
    const policy = await call('POST', '/service-policies', {
      name: `rules-${Math.random()}`,
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: [`#${text}`],
      serviceRoles: ['#all'],
    });
    const byId = await call('POST', '/edge-router-policies', {
      name: `rules-${Math.random()}`,
      semantic: 'AnyOf',
      identityRoles: [`@${text}`],
      edgeRouterRoles: ['#all'],
    });

    for (const response of [identity, service, policy, byId]) {
      expect(response.status, response.text).toBe(400);
      expect(response.body.error.code).toBe('COULD_NOT_VALIDATE');
    }
  });

  it('reads #ALL as #all (so it must stand alone) and reserves the attribute name all', async () => {
    const alone = await createdId('/service-policies', {
      name: 'upper-all',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#ALL'],
      serviceRoles: ['#All'],
    });
    const mixed = await call('POST', '/service-policies', {
      name: 'upper-all-mixed',
      type: 'Dial',
      semantic: 'AnyOf',
      identityRoles: ['#ALL', '#other'],
      serviceRoles: ['#all'],
    });
    const attribute = await call('POST', '/services', { name: 'named-all', roleAttributes: ['All'] });

    const stored = (await call('GET', `/service-policies/${alone}`)).body.data;
    expect(stored.identityRoles).toEqual(['#all']);
    expect(stored.serviceRoles).toEqual(['#all']);
    expect(mixed.status).toBe(400);
    expect(attribute.status).toBe(400);
  });

  it('keeps each attribute and role once, in the order first given; unicode letters and spaces inside are fine', async () => {
    const service = await createdId('/services', {
      name: 'dedupe',
      roleAttributes: ['b', 'a', 'b', 'sales team', 'vertrieb-ü', 'a'],
    });
    const identity = await createdId('/identities', { name: 'dedupe-identity', type: 'User', isAdmin: false });
    const policy = await createdId('/service-policies', {
      name: 'dedupe-policy',
      type: 'Bind',
      semantic: 'AllOf',
      identityRoles: ['#x', '#x', `@${identity}`, `@${identity}`],
      serviceRoles: ['#b'],
    });

    expect((await call('GET', `/services/${service}`)).body.data.roleAttributes).toEqual([
      'b',
      'a',
      'sales team',
      'vertrieb-ü',
    ]);
    expect((await call('GET', `/service-policies/${policy}`)).body.data.identityRoles).toEqual(['#x', `@${identity}`]);
  });
});
