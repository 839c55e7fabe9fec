import type { Enrollment } from '../entities/enrollment.ts';
import { entityRef, selfLinks } from './entity-ref.ts';

/** An outstanding enrollment as the API shows it. */
export function enrollmentView(enrollment: Enrollment, identityName: string, caName = enrollment.caId ?? '') {
  // Only updb enrollments have a username; the document types it as a string, so others leave it out.
  const { username, ...rest } = enrollment;
  return {
    ...rest,
    ...(username !== null ? { username } : {}),
    _links: selfLinks('enrollments', enrollment.id),
    identity: entityRef('identities', enrollment.identityId, identityName),
    ca: enrollment.caId ? entityRef('cas', enrollment.caId, caName) : null,
    // The reference's `details` map (required by its document); nothing method-specific to add yet.
    details: {},
  };
}
