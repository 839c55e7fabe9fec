import { describe, expect, it } from 'vitest';
import { CORS_ALLOWED_METHODS } from '#shared/http/cors.ts';
import { ROUTES } from '#shared/routes/route-table.ts';

describe('CORS_ALLOWED_METHODS', () => {
  it('advertises exactly the methods the route table serves, so no preflight promises a method that answers 405', () => {
    const served = new Set(ROUTES.map((route) => route.method));

    expect(new Set(CORS_ALLOWED_METHODS)).toEqual(served);
    expect(CORS_ALLOWED_METHODS).not.toContain('HEAD');
  });
});
