import * as z from 'zod';
import { deleteApiSession, getApiSessionById } from '#shared/auth/api-session-store.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import { identities } from '#shared/entities/identity.ts';
import { REVOCATION_TYPES, type Revocation, revocations } from '#shared/entities/revocation.ts';
import { created } from '#shared/http/envelope.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { REVOCATIONS } from '#shared/routes/groups/pki-routes.ts';
import { idField, tagsField } from '#shared/schemas/common-fields.ts';
import { withOptimisticRetry } from '#shared/store/optimistic-retry.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';

/** Long enough to outlive every credential a revocation covers: the certificates the network issues last a year. */
const REVOCATION_LIFETIME_MS = 366 * 24 * 3600_000;

const createSchema = z.object({ id: idField, type: z.enum(REVOCATION_TYPES), tags: tagsField.optional() });

const revocationApi: EntityApi<Revocation, never, never, never> = {
  def: revocations,
  view: (_deps, doc) => ({ ...doc, _links: selfLinks('revocations', doc.id) }),
};

/**
 * `POST /revocations {id, type}`: stored under the revoked id (a second revocation of it moves its time forward). An
 * IDENTITY revocation also ends the identity's API sessions at once (its `sessionsValidFrom`, in the same
 * transaction, refused from the commit on by `isRevoked`; the identity's `ended` notice has the routers drop them and
 * the sweep remove them); an API_SESSION one ends that session. Cert login reads revocations by key (`certificate-login.ts`).
 */
const createRevocation: Operation = documented(
  async (request, deps) => {
    const input = parseWith(createSchema, request.body ?? {});
    await withOptimisticRetry(async () => {
      const now = deps.now();
      const doc: Revocation = {
        id: input.id,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
        tags: input.tags ?? {},
        type: input.type,
        expiresAt: new Date(now.getTime() + REVOCATION_LIFETIME_MS).toISOString(),
      };
      const existing = await deps.store.get(revocations, input.id);
      const ops: WriteOp[] = existing
        ? deps.store.replaceOps(revocations, existing, doc)
        : deps.store.createOps(revocations, doc);
      const identity = input.type === 'IDENTITY' ? await deps.store.get(identities, input.id) : undefined;
      if (!identity) return await deps.store.transact(ops);
      ops.push(
        ...deps.store.replaceOps(identities, identity, {
          ...identity.doc,
          sessionsValidFrom: doc.createdAt,
          updatedAt: doc.createdAt,
        }),
      );
      await deps.store.transact(ops);
    });
    if (input.type === 'API_SESSION') {
      const session = await getApiSessionById(deps, input.id);
      if (session) await deleteApiSession(deps, session);
    }
    request.logger.info('revocation created', { id: input.id, type: input.type });
    return created('revocations', input.id);
  },
  { body: createSchema },
);

export const revocationOperations: Record<string, Operation> = crudOperations(REVOCATIONS, revocationApi, {
  create: createRevocation,
});
