import { describe, expect, it } from 'vitest';
import { GROUP_OPERATIONS } from '#local/group-operations.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { identityTypes } from '#shared/entities/identity-type.ts';
import { type CrudResource, crudResource, crudRoutes } from '#shared/routes/crud-resource.ts';
import * as authenticationRoutes from '#shared/routes/groups/authentication-routes.ts';
import * as externalJwtSignerRoutes from '#shared/routes/groups/external-jwt-signer-routes.ts';
import * as identityRoutes from '#shared/routes/groups/identity-routes.ts';
import * as pkiRoutes from '#shared/routes/groups/pki-routes.ts';
import * as policyRoutes from '#shared/routes/groups/policy-routes.ts';
import * as postureCheckRoutes from '#shared/routes/groups/posture-check-routes.ts';
import * as routersRoutes from '#shared/routes/groups/routers-routes.ts';
import * as servicesRoutes from '#shared/routes/groups/services-routes.ts';
import type { OperationGroup } from '#shared/routes/route.ts';
import { ROUTES } from '#shared/routes/route-table.ts';

/** Every collection the group route files declare for the kit. */
const RESOURCES: [string, CrudResource][] = [
  authenticationRoutes,
  externalJwtSignerRoutes,
  identityRoutes,
  pkiRoutes,
  policyRoutes,
  postureCheckRoutes,
  routersRoutes,
  servicesRoutes,
].flatMap((module) =>
  Object.entries(module).filter((entry): entry is [string, CrudResource] => {
    const value = entry[1] as Partial<CrudResource>;
    return typeof value === 'object' && 'names' in value && 'actions' in value;
  }),
);

const routeKey = (route: { method: string; path: string; operation: string }) =>
  `${route.method} ${route.path} ${route.operation}`;

describe('a CRUD collection declared once', () => {
  it('names its operations from its singular and plural, as the reference forms its operationIds', () => {
    const widgets = crudResource('services', '/widgets', 'Widget', 'Widgets');

    expect(crudRoutes(widgets).map(routeKey)).toEqual([
      'GET /widgets listWidgets',
      'POST /widgets createWidget',
      'GET /widgets/{id} detailWidget',
      'PUT /widgets/{id} updateWidget',
      'PATCH /widgets/{id} patchWidget',
      'DELETE /widgets/{id} deleteWidget',
    ]);
    expect(
      Object.keys(
        crudOperations({ ...widgets, actions: ['list', 'detail'] }, { def: identityTypes, view: (_deps, doc) => doc }),
      ),
    ).toEqual(['listWidgets', 'detailWidget']);
  });

  it('finds every declared collection', () => {
    expect(RESOURCES.map(([name]) => name)).toEqual(
      expect.arrayContaining(['IDENTITIES', 'SERVICES', 'EDGE_ROUTERS', 'POSTURE_CHECKS', 'CAS', 'SERVICE_POLICIES']),
    );
  });

  it.each(RESOURCES)('%s: each operation is a route line and an operation of its group', (_name, resource) => {
    const tableLines = new Set(ROUTES.filter((route) => route.group === resource.group).map(routeKey));
    const operations = GROUP_OPERATIONS[resource.group];

    for (const route of crudRoutes(resource)) {
      expect(tableLines).toContain(routeKey(route));
      expect(operations[route.operation], route.operation).toBeTypeOf('function');
    }
  });
});

describe('the route table and the group handlers', () => {
  it.each(Object.keys(GROUP_OPERATIONS) as OperationGroup[])(
    '%s: serves exactly the operations its route lines name',
    (group) => {
      const routed = new Set(ROUTES.filter((route) => route.group === group).map((route) => route.operation));

      expect(new Set(Object.keys(GROUP_OPERATIONS[group]))).toEqual(routed);
    },
  );
});
