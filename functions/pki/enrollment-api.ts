import * as z from 'zod';
import { usernameFreeOp } from '#shared/auth/username-free.ts';
import { entityApi, type WriteContext } from '#shared/crud/entity-api.ts';
import { viewsSharing } from '#shared/crud/page-views.ts';
import { cas } from '#shared/entities/ca.ts';
import { ENROLLMENT_METHODS, type Enrollment, enrollments } from '#shared/entities/enrollment.ts';
import { identities } from '#shared/entities/identity.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { futureExpiry, newEnrollment } from '#shared/pki/new-enrollment.ts';
import { expiresAtField, idField } from '#shared/schemas/common-fields.ts';
import { usernameField } from '#shared/schemas/credential-fields.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { enrollmentView } from '#shared/views/enrollment-view.ts';
import { nameLookup } from '#shared/views/name-lookup.ts';

const createSchema = z.object({
  identityId: idField,
  method: z.enum(ENROLLMENT_METHODS),
  expiresAt: expiresAtField,
  caId: idField.nullable().optional(),
  username: usernameField.nullable().optional(),
});

/**
 * The enrollment an admin asks for (or an authenticator reverts to), with its JWT (one `Sign`); the kit checks that
 * the identity and the CA exist, and a updb enrollment's username must still be free.
 */
export async function requestedEnrollment(
  context: WriteContext & { readonly id: string },
  input: Pick<Enrollment, 'identityId' | 'method' | 'expiresAt'> & Partial<Pick<Enrollment, 'caId' | 'username'>>,
): Promise<{ doc: Enrollment; ops: WriteOp[] }> {
  const { deps } = context;
  if (input.method === 'ottca' && !input.caId) throw invalidField('caId', 'an ottca enrollment names its CA', null);
  if (input.method === 'updb' && !input.username) {
    throw invalidField('username', 'a updb enrollment names its username', null);
  }
  const doc = await newEnrollment(deps, context.request.baseUrl, context.now, {
    id: context.id,
    identityId: input.identityId,
    method: input.method,
    expiresAt: futureExpiry(deps, input.expiresAt),
    caId: input.method === 'ottca' ? (input.caId ?? null) : null,
    username: input.method === 'updb' ? (input.username ?? null) : null,
  });
  return { doc, ops: doc.username ? [usernameFreeOp(deps, doc.username, 'username')] : [] };
}

/**
 * Outstanding enrollments (`/enrollments`). One per method per identity (the kit's unique key: a second is 409
 * `ENROLLMENT_EXISTS`); the identity and, for ottca, the CA must exist (kit references, checked in the transaction).
 */
export const enrollmentApi = entityApi({
  def: enrollments,
  createSchema,
  create: (input, context) => requestedEnrollment(context, input),
  // With the names of its identity and CA, each read once a page.
  ...viewsSharing(
    (deps) => ({ identity: nameLookup(deps, identities), ca: nameLookup(deps, cas) }),
    async (doc: Enrollment, names) => {
      const [identity, ca] = await Promise.all([
        names.identity(doc.identityId),
        doc.caId ? names.ca(doc.caId) : undefined,
      ]);
      return enrollmentView(doc, identity, ca);
    },
  ),
});
