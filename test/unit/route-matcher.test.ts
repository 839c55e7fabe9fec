import { describe, expect, it } from 'vitest';
import { GROUP_OPERATIONS } from '#local/group-operations.ts';
import { RouteMatcher } from '#local/route-matcher.ts';
import { resourcesOf } from '#shared/routes/resource-paths.ts';
import { ROUTES } from '#shared/routes/route-table.ts';

const matcher = new RouteMatcher(ROUTES);

describe('the route table', () => {
  it('names only operations its group implements', () => {
    for (const route of ROUTES) {
      expect(GROUP_OPERATIONS[route.group][route.operation], `${route.method} ${route.path}`).toBeTypeOf('function');
    }
  });

  it('requires an admin for every operation only the management API has', () => {
    const managementOnly = ROUTES.filter((route) => !route.apis.includes('client'));

    expect(managementOnly.length).toBeGreaterThan(0);
    for (const route of managementOnly) expect(route.auth, `${route.method} ${route.path}`).toBe('admin');
  });

  it('leaves only version, capabilities, the API documents and login open to anonymous callers', () => {
    const anonymous = ROUTES.filter((route) => route.auth === 'none').map((route) => route.operation);

    // The API documents (`/specs*`) are public in the reference too (`security: []` in its documents); they describe
    // the routes, never any data. So is the client's list of protocols: the address the caller already reached.
    expect(anonymous.sort()).toEqual([
      'authenticate',
      'detailSpec',
      'detailSpecBody',
      'listEnumeratedCapabilities',
      'listProtocols',
      'listRoot',
      'listSpecs',
      'listVersion',
    ]);
  });

  it('has no two routes on the same method and resource', () => {
    const seen = new Set<string>();
    for (const route of ROUTES) {
      for (const { resource } of resourcesOf(route)) {
        const key = `${route.method} ${resource}`;
        expect(seen.has(key), key).toBe(false);
        seen.add(key);
      }
    }
  });

  it('serves client routes un-prefixed too, and management routes only under their base path', () => {
    const authenticate = ROUTES.find((route) => route.operation === 'authenticate')!;
    const listIdentities = ROUTES.find((route) => route.operation === 'listIdentities')!;

    expect(resourcesOf(authenticate).map((r) => r.resource)).toEqual([
      '/edge/client/v1/authenticate',
      '/edge/management/v1/authenticate',
      '/authenticate',
    ]);
    expect(resourcesOf(listIdentities).map((r) => r.resource)).toEqual(['/edge/management/v1/identities']);
  });
});

describe('RouteMatcher', () => {
  it('fills path parameters, decoded', () => {
    const match = matcher.match('GET', '/edge/management/v1/identities/a%2Fb');

    expect(match).toMatchObject({
      kind: 'found',
      resource: '/edge/management/v1/identities/{id}',
      pathParameters: { id: 'a/b' },
    });
  });

  it('prefers literal segments over parameters', () => {
    const match = matcher.match('GET', '/edge/management/v1/identity-types');

    expect(match).toMatchObject({ kind: 'found', route: { operation: 'listIdentityTypes' } });
  });

  it('tells a wrong method from an unknown path', () => {
    expect(matcher.match('POST', '/version').kind).toBe('method-not-allowed');
    expect(matcher.match('GET', '/edge/management/v1/nothing').kind).toBe('not-found');
    expect(matcher.match('GET', '/edge/management/v1/identities/x/y/z').kind).toBe('not-found');
  });

  it('matches the root and the bare base paths as the version route', () => {
    for (const path of ['/', '/edge/client/v1', '/edge/management/v1/']) {
      expect(matcher.match('GET', path)).toMatchObject({ kind: 'found', route: { operation: 'listRoot' } });
    }
  });
});
