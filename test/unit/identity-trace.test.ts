import { describe, expect, it } from 'vitest';
import { traceLogFields } from '#shared/auth/identity-trace.ts';
import { newIdentity } from '#shared/entities/identity.ts';

const now = new Date('2026-01-01T12:00:00.000Z');
const traced = (until: string) =>
  newIdentity({
    id: 'traced',
    name: 'traced',
    createdAt: now.toISOString(),
    tracing: { traceId: 'trace-1', until, channels: ['all'] },
  });

describe('traceLogFields', () => {
  it('stamps the trace id while the trace runs', () => {
    expect(traceLogFields(traced('2026-01-01T12:00:00.001Z'), now)).toEqual({ traceId: 'trace-1' });
  });

  it('stamps nothing from the trace’s end on, or without a trace', () => {
    expect(traceLogFields(traced('2026-01-01T12:00:00.000Z'), now)).toEqual({});
    expect(traceLogFields(traced('2026-01-01T11:59:59.999Z'), now)).toEqual({});
    expect(traceLogFields(newIdentity({ id: 'plain', name: 'plain', createdAt: now.toISOString() }), now)).toEqual({});
  });
});
