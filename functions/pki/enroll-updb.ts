import * as z from 'zod';
import { hashAllowedPassword } from '#shared/auth/password-policy.ts';
import { ok } from '#shared/http/envelope.ts';
import { documented, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { passwordField } from '#shared/schemas/credential-fields.ts';
import { completeEnrollmentOps, outstandingEnrollment } from './enrollment-token.ts';

// The username comes from the enrollment (a sent one is ignored, as the reference does); the password is required.
const updbBodySchema = z.object({ password: passwordField, username: z.string().optional() });

/**
 * updb: the identity's username/password authenticator, with the enrollment's username and the password sent
 * (checked against the identity's auth policy), created as the enrollment is deleted, in one transaction.
 */
export async function enrollByUpdb(request: OperationRequest, deps: Deps) {
  const stored = await outstandingEnrollment(deps, request, 'updb');
  const { password } = parseWith(updbBodySchema, request.body ?? {});
  const username = stored.doc.username ?? '';
  const passwordHash = await hashAllowedPassword(deps, stored.doc.identityId, password);
  await deps.store.transact(completeEnrollmentOps(deps, stored, { method: 'updb', username, passwordHash }));
  deps.metrics.count('Enrollments', { method: 'updb' });
  request.logger.info('identity enrolled', { method: 'updb', identityId: stored.doc.identityId });
  return ok({ username });
}

/** `POST /enroll/updb?token=…` `{password}`. */
export const enrollUpdb: Operation = documented(enrollByUpdb, { body: updbBodySchema });
