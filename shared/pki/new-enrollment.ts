import type { Enrollment } from '../entities/enrollment.ts';
import { invalidField } from '../errors/api-error.ts';
import { newToken } from '../ids.ts';
import type { Deps } from '../ports/deps.ts';
import { withEnrollmentJwt } from './enrollment-jwt.ts';

/**
 * A new outstanding enrollment of an identity: a fresh single-use token, and its JWT signed once here (one signature),
 * issued for the address the enrollment method is served at.
 */
export function newEnrollment(
  deps: Deps,
  baseUrl: string,
  now: string,
  fields: Pick<Enrollment, 'id' | 'identityId' | 'method' | 'expiresAt' | 'caId' | 'username'>,
): Promise<Enrollment> {
  const unsigned: Enrollment = { ...fields, createdAt: now, updatedAt: now, tags: {}, token: newToken() };
  return withEnrollmentJwt(deps.signers.server, baseUrl, unsigned, deps.config);
}

/** An enrollment's end, which must be in the future (400 on `expiresAt` otherwise), as ISO-8601 UTC. */
export function futureExpiry(deps: Deps, expiresAt: string): string {
  const time = Date.parse(expiresAt);
  if (!(time > deps.now().getTime())) throw invalidField('expiresAt', 'must be in the future', expiresAt);
  return new Date(time).toISOString();
}
