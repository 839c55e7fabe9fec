import type { Identity } from '../entities/identity.ts';

/**
 * What the log lines of a request by `identity` carry while an admin's trace of it runs (`PUT /identities/{id}/trace`):
 * the trace's `traceId`, so that every line of the identity's requests can be found by it, as the reference stamps
 * the log lines of a traced identity's requests. Nothing once the trace has reached its `until` or was stopped.
 */
export function traceLogFields(identity: Identity, now: Date): { readonly traceId?: string } {
  const tracing = identity.tracing;
  return tracing && Date.parse(tracing.until) > now.getTime() ? { traceId: tracing.traceId } : {};
}
