import * as z from 'zod';
import { crudOperations, getOrNotFound } from '#shared/crud/crud-operations.ts';
import { enrollments } from '#shared/entities/enrollment.ts';
import { ok } from '#shared/http/envelope.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { newToken } from '#shared/ids.ts';
import { withEnrollmentJwt } from '#shared/pki/enrollment-jwt.ts';
import { futureExpiry } from '#shared/pki/new-enrollment.ts';
import { ENROLLMENTS } from '#shared/routes/groups/pki-routes.ts';
import { expiresAtField } from '#shared/schemas/common-fields.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import { enrollmentApi } from './enrollment-api.ts';

const refreshSchema = z.object({ expiresAt: expiresAtField });

/**
 * `POST /enrollments/{id}/refresh {expiresAt}`: a new token and JWT with the new end; the old token stops working
 * (its unique marker moves in the same version-checked write).
 */
const refreshEnrollment: Operation = documented(
  async (request, deps) => {
    const { expiresAt } = parseWith(refreshSchema, request.body ?? {});
    const id = request.pathParameters.id ?? '';
    await withOptimisticRetry(async () => {
      const stored = await getOrNotFound(deps, enrollments, id);
      const now = deps.now().toISOString();
      const next = await withEnrollmentJwt(
        deps.signers.server,
        request.baseUrl,
        {
          ...stored.doc,
          token: newToken(),
          expiresAt: futureExpiry(deps, expiresAt),
          updatedAt: now,
        },
        deps.config,
      );
      await deps.store.transact(deps.store.replaceOps(enrollments, stored, next));
    });
    request.logger.info('enrollment refreshed', { id });
    return ok({ id, _links: { self: { href: `./enrollments/${id}` } } });
  },
  { body: refreshSchema },
);

export const enrollmentOperations: Record<string, Operation> = {
  ...crudOperations(ENROLLMENTS, enrollmentApi),
  refreshEnrollment,
};
