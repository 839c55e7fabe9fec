import { z } from 'zod';
import { deleteApiSessionOps, listApiSessionsOfIdentity } from '#shared/auth/api-session-store.ts';
import { getOrNotFound, withOptimisticRetry } from '#shared/crud/crud-operations.ts';
import { identities } from '#shared/entities/identity.ts';
import { empty } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { MAX_TRANSACTION_ITEMS } from '#shared/store/entity-store.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

const disableSchema = z.object({
  durationMinutes: z
    .number()
    .int()
    .min(0)
    .max(525_600 * 100),
});

/**
 * Writes an identity change together with the end of its API sessions. Sessions beyond what one transaction holds
 * are ended first, in batches: ending a session early is harmless, leaving one alive is not.
 */
async function writeEndingSessions(deps: Parameters<Operation>[1], identityId: string, ops: WriteOp[]): Promise<void> {
  const sessionOps = (await listApiSessionsOfIdentity(deps, identityId)).flatMap((session) =>
    deleteApiSessionOps(deps, session),
  );
  const room = MAX_TRANSACTION_ITEMS - ops.length;
  const early = sessionOps.slice(0, Math.max(0, sessionOps.length - room));
  for (let i = 0; i < early.length; i += MAX_TRANSACTION_ITEMS) {
    await deps.store.transact(early.slice(i, i + MAX_TRANSACTION_ITEMS));
  }
  await deps.store.transact([...ops, ...sessionOps.slice(early.length)]);
}

/** `POST /identities/{id}/disable {durationMinutes}`: 0 disables until enabled; its API sessions end at once. */
export const disableIdentity: Operation = async (request, deps) => {
  const { durationMinutes } = parseWith(disableSchema, request.body ?? {});
  await withOptimisticRetry(async () => {
    const stored = await getOrNotFound(deps, identities, request.pathParameters.id ?? '');
    const now = deps.now();
    const disabledUntil =
      durationMinutes === 0 ? null : new Date(now.getTime() + durationMinutes * 60_000).toISOString();
    const next = {
      ...stored.doc,
      disabled: true,
      disabledAt: now.toISOString(),
      disabledUntil,
      updatedAt: now.toISOString(),
    };
    await writeEndingSessions(deps, stored.doc.id, deps.store.replaceOps(identities, stored, next));
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
