import { describe, expect, it } from 'vitest';
import { traced, tracingEnabled, tracingMiddleware } from '#shared/log/tracing.ts';

describe('X-Ray tracing (Powertools Tracer)', () => {
  it('runs in Lambda unless POWERTOOLS_TRACE_ENABLED is false, and never elsewhere', () => {
    expect(tracingEnabled({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x' })).toBe(true);
    expect(tracingEnabled({ AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', POWERTOOLS_TRACE_ENABLED: 'FALSE' })).toBe(
      false,
    );
    expect(tracingEnabled({})).toBe(false);
  });

  it('leaves clients and handlers as they are where it does not run (tests, npm start)', () => {
    const client = { send: async () => 'answer' };

    expect(traced(client)).toBe(client);
    expect(tracingMiddleware()).toEqual([]);
  });
});
