import { describe, expect, it } from 'vitest';
import { ROUTES } from '#shared/routes/route-table.ts';
import { operationIdOf } from './openziti-spec.ts';

describe('the route table against the OpenZiti documents', () => {
  it.each(
    // The OIDC provider has no OpenAPI document: test/api/oidc-*.test.ts hold its contract.
    ROUTES.flatMap((route) =>
      route.apis.flatMap((api) => (api === 'oidc' ? [] : [[api, route.method, route.path, route.operation] as const])),
    ),
  )('%s %s %s is the documented operation %s', (api, method, path, operation) => {
    expect(operationIdOf(api, method, path)).toBe(operation);
  });
});
