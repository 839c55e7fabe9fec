import * as z from 'zod';
import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { identities } from '#shared/entities/identity.ts';
import { mfas } from '#shared/entities/mfa.ts';
import { ApiError, notFound } from '#shared/errors/api-error.ts';
import { empty } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';

const disableSchema = z.object({
  durationMinutes: z
    .number()
    .int()
    .min(0)
    .max(525_600 * 100),
});

/**
 * `POST /identities/{id}/disable {durationMinutes}`: 0 disables until enabled; its API sessions end at once (refused
 * from the commit on, `isRevoked`), the routers drop them within a second or two and a sweep removes them from the
 * table, however many (the identity's `ended` notice, `shared/entities/router-notice.ts`).
 */
export const disableIdentity: Operation = async (request, deps) => {
  const { durationMinutes } = parseWith(disableSchema, request.body ?? {});
  await withOptimisticRetry(async () => {
    const stored = await getOrNotFound(deps, identities, request.pathParameters.id ?? '');
    // The default admin is how an operator gets back in, so it cannot be disabled (as it cannot be deleted or demoted).
    if (stored.doc.isDefaultAdmin) {
      throw new ApiError('ENTITY_CAN_NOT_BE_UPDATED', { message: 'The default admin cannot be disabled.' });
    }
    const now = deps.now();
    const disabledUntil =
      durationMinutes === 0 ? null : new Date(now.getTime() + durationMinutes * 60_000).toISOString();
    const next = {
      ...stored.doc,
      disabled: true,
      disabledAt: now.toISOString(),
      disabledUntil,
      sessionsValidFrom: now.toISOString(),
      updatedAt: now.toISOString(),
    };
    await deps.store.transact(deps.store.replaceOps(identities, stored, next));
  });
  request.logger.info('identity disabled', { id: request.pathParameters.id, durationMinutes });
  return empty();
};

/** `POST /identities/{id}/enable`: clears every trace of a disable. */
export const enableIdentity: Operation = async (request, deps) => {
  await withOptimisticRetry(async () => {
    const stored = await getOrNotFound(deps, identities, request.pathParameters.id ?? '');
    const now = deps.now().toISOString();
    const next = { ...stored.doc, disabled: false, disabledAt: null, disabledUntil: null, updatedAt: now };
    await deps.store.transact(deps.store.replaceOps(identities, stored, next));
  });
  return empty();
};

/**
 * `DELETE /identities/{id}/mfa`: an admin resets the identity's MFA (a lost device); it can enroll again. Its
 * sessions keep whatever second factor they already gave.
 */
export const removeIdentityMfa: Operation = async (request, deps) => {
  const identityId = request.pathParameters.id ?? '';
  await withOptimisticRetry(async () => {
    const identity = await getOrNotFound(deps, identities, identityId);
    const stored = await deps.store.get(mfas, identity.doc.id);
    if (!stored) throw notFound(mfas.label, identityId);
    await deps.store.transact(deps.store.deleteOps(mfas, stored.doc, stored.version));
  });
  request.logger.info('identity mfa removed', { identityId });
  return empty();
};
