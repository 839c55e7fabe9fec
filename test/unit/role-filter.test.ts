import { describe, expect, it } from 'vitest';
import { matchesRoles } from '#shared/list/role-filter.ts';

describe('matchesRoles', () => {
  it('AllOf needs every #attribute', () => {
    expect(matchesRoles('i1', ['a', 'b'], ['#a', '#b'], 'AllOf')).toBe(true);
    expect(matchesRoles('i1', ['a'], ['#a', '#b'], 'AllOf')).toBe(false);
  });

  it('AnyOf needs one #attribute', () => {
    expect(matchesRoles('i1', ['b'], ['#a', '#b'], 'AnyOf')).toBe(true);
    expect(matchesRoles('i1', ['c'], ['#a', '#b'], 'AnyOf')).toBe(false);
  });

  it('always unions in @ids, whatever the semantic', () => {
    expect(matchesRoles('i1', [], ['@i1', '#a'], 'AllOf')).toBe(true);
    expect(matchesRoles('i2', [], ['@i1'], 'AnyOf')).toBe(false);
  });

  it('treats #all as an ordinary attribute in list filters', () => {
    expect(matchesRoles('i1', ['a'], ['#all'], 'AllOf')).toBe(false);
    expect(matchesRoles('i1', ['all'], ['#all'], 'AllOf')).toBe(true);
  });
});
