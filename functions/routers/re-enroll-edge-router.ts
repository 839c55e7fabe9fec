import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { empty } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import { newRouterEnrollment } from './router-fields.ts';

/**
 * `POST /edge-routers/{id}/re-enroll`: the router's certificate stops counting (fingerprint and certificate cleared,
 * unverified) and a new one-time enrollment with a new JWT replaces any outstanding one, whose token stops working.
 * Its name, attributes and policies stay.
 */
export const reEnrollEdgeRouter: Operation = async (request, deps) => {
  const id = request.pathParameters.id ?? '';
  await withOptimisticRetry(async () => {
    const stored = await getOrNotFound(deps, edgeRouters, id);
    const now = deps.now().toISOString();
    const enrollment = await newRouterEnrollment({ deps, request, now, id }, 'erott');
    const next = { ...stored.doc, ...enrollment, certPem: null, updatedAt: now };
    await deps.store.transact(deps.store.replaceOps(edgeRouters, stored, next));
  });
  request.logger.info('edge router re-enrollment started', { id });
  return empty();
};
