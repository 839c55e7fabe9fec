import { describe, expect, it } from 'vitest';
import { GROUP_OPERATIONS } from '#local/group-operations.ts';
import { resourcesOf } from '#shared/routes/resource-paths.ts';
import { RouteMatcher } from '#shared/routes/route-matcher.ts';
import { ROUTES } from '#shared/routes/route-table.ts';
import { specOperations } from '../contract/openziti-spec.ts';

const matcher = new RouteMatcher(ROUTES);

describe('the route table', () => {
  it('names only operations its group implements', () => {
    for (const route of ROUTES) {
      expect(GROUP_OPERATIONS[route.group][route.operation], `${route.method} ${route.path}`).toBeTypeOf('function');
    }
  });

  it('requires an admin for every operation only the management API has', () => {
    // The OIDC provider's routes are an API of their own, each checking the credential of its step (a login, a code,
    // a refresh token), none of them an admin's.
    const managementOnly = ROUTES.filter((route) => !route.apis.includes('client') && !route.apis.includes('oidc'));

    expect(managementOnly.length).toBeGreaterThan(0);
    for (const route of managementOnly) expect(route.auth, `${route.method} ${route.path}`).toBe('admin');
  });

  it('leaves open to anonymous callers only what the OpenZiti documents leave open, on each API', () => {
    const anonymous = ROUTES.filter((route) => route.auth === 'none');
    const documentedOpen = new Set(
      (['client', 'management'] as const).flatMap((api) =>
        specOperations(api)
          .filter((operation) => operation.anonymous)
          .map((operation) => `${api} ${operation.operationId}`),
      ),
    );

    // Login, enrollment, the public PKI, version and capabilities, the API documents (they describe the routes,
    // never any data), the client's protocols and external JWT signers: each public in the reference too.
    expect(anonymous.map((route) => route.operation)).toEqual(
      expect.arrayContaining(['authenticate', 'listVersion', 'listSpecs', 'enroll', 'listWellKnownCas']),
    );
    for (const route of anonymous) {
      // The OIDC provider has no OpenAPI document: its endpoints are OpenID Connect's, anonymous to the route table.
      for (const api of route.apis.filter((each) => each !== 'oidc')) {
        expect(documentedOpen.has(`${api} ${route.operation}`), `${api} ${route.operation}`).toBe(true);
      }
    }
  });

  it("serves the OIDC provider's endpoints anonymously and nothing else under /oidc", () => {
    const oidc = ROUTES.filter((route) => route.apis.includes('oidc'));

    expect(oidc.length).toBeGreaterThan(20);
    for (const route of oidc) {
      expect(route.apis, route.path).toEqual(['oidc']);
      expect(route.auth, route.path).toBe('none');
      expect(['info', 'authentication'], route.path).toContain(route.group);
    }
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
