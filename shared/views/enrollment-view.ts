import type { Enrollment } from '../entities/enrollment.ts';
import { entityRef, selfLinks } from './entity-ref.ts';

/** An outstanding enrollment as the API shows it. */
export function enrollmentView(enrollment: Enrollment, identityName: string) {
  return {
    ...enrollment,
    _links: selfLinks('enrollments', enrollment.id),
    identity: entityRef('identities', enrollment.identityId, identityName),
    ca: enrollment.caId ? entityRef('cas', enrollment.caId, enrollment.caId) : null,
    // The reference's `details` map (required by its document); nothing method-specific to add yet.
    details: {},
  };
}
