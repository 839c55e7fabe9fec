import * as z from 'zod';
import { usernameFreeOp } from '#shared/auth/username-free.ts';
import { crudOperations, getOrNotFound, withOptimisticRetry } from '#shared/crud/crud-operations.ts';
import type { EntityApi, WriteContext } from '#shared/crud/entity-api.ts';
import { cas } from '#shared/entities/ca.ts';
import { ENROLLMENT_METHODS, type Enrollment, enrollments } from '#shared/entities/enrollment.ts';
import { identities } from '#shared/entities/identity.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { ok } from '#shared/http/envelope.ts';
import { documented, type Operation } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { newToken } from '#shared/ids.ts';
import { withEnrollmentJwt } from '#shared/pki/enrollment-jwt.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { ENROLLMENTS } from '#shared/routes/groups/pki-routes.ts';
import { idField } from '#shared/schemas/common-fields.ts';
import { usernameField } from '#shared/schemas/credential-fields.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { enrollmentView } from '#shared/views/enrollment-view.ts';
import { type NameLookup, nameLookup } from '#shared/views/name-lookup.ts';

const expiresAtField = z.iso.datetime({ offset: true });

const createSchema = z.object({
  identityId: idField,
  method: z.enum(ENROLLMENT_METHODS),
  expiresAt: expiresAtField,
  caId: idField.nullable().optional(),
  username: usernameField.nullable().optional(),
});
type EnrollmentCreate = z.infer<typeof createSchema>;

const refreshSchema = z.object({ expiresAt: expiresAtField });

/** An enrollment's end, which must be in the future (400 on `expiresAt` otherwise), as ISO-8601 UTC. */
export function futureExpiry(deps: Deps, expiresAt: string): string {
  const time = Date.parse(expiresAt);
  if (!(time > deps.now().getTime())) throw invalidField('expiresAt', 'must be in the future', expiresAt);
  return new Date(time).toISOString();
}

/** A new outstanding enrollment with its JWT (one `Sign`); the kit checks the identity and the CA exist. */
export async function newEnrollment(
  context: WriteContext & { readonly id: string },
  input: {
    identityId: string;
    method: Enrollment['method'];
    expiresAt: string;
    caId?: string | null;
    username?: string | null;
  },
): Promise<{ doc: Enrollment; ops: WriteOp[] }> {
  const { deps } = context;
  if (input.method === 'ottca' && !input.caId) throw invalidField('caId', 'an ottca enrollment names its CA', null);
  if (input.method === 'updb' && !input.username) {
    throw invalidField('username', 'a updb enrollment names its username', null);
  }
  const doc = await withEnrollmentJwt(
    deps.signers.server,
    context.request.baseUrl,
    {
      id: context.id,
      createdAt: context.now,
      updatedAt: context.now,
      tags: {},
      identityId: input.identityId,
      method: input.method,
      token: newToken(),
      expiresAt: futureExpiry(deps, input.expiresAt),
      caId: input.method === 'ottca' ? (input.caId ?? null) : null,
      username: input.method === 'updb' ? (input.username ?? null) : null,
    },
    deps.config,
  );
  return { doc, ops: doc.username ? [usernameFreeOp(deps, doc.username, 'username')] : [] };
}

/** An enrollment with the names of its identity and CA (each read once per page). */
async function viewOf(doc: Enrollment, identityName: NameLookup, caName: NameLookup) {
  const [identity, ca] = await Promise.all([identityName(doc.identityId), doc.caId ? caName(doc.caId) : undefined]);
  return enrollmentView(doc, identity, ca);
}

/**
 * Outstanding enrollments (`/enrollments`). One per method per identity (the kit's unique key: a second is 409
 * `ENROLLMENT_EXISTS`); the identity and, for ottca, the CA must exist (kit references, checked in the transaction).
 */
export const enrollmentApi: EntityApi<Enrollment, EnrollmentCreate, never, never> = {
  def: enrollments,
  createSchema,
  create: (input, context) => newEnrollment(context, input),
  view: (deps, doc) => viewOf(doc, nameLookup(deps, identities), nameLookup(deps, cas)),
  viewPage: (deps, docs) => {
    const [identityName, caName] = [nameLookup(deps, identities), nameLookup(deps, cas)];
    return Promise.all(docs.map((doc) => viewOf(doc, identityName, caName)));
  },
};

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
