import type * as z from 'zod';
import { usernameFreeOp } from '#shared/auth/username-free.ts';
import type { WriteContext } from '#shared/crud/entity-api.ts';
import { DEFAULT_ENROLLMENT_MINUTES, type Enrollment, enrollments } from '#shared/entities/enrollment.ts';
import { type ApiError, invalidField } from '#shared/errors/api-error.ts';
import { newId } from '#shared/ids.ts';
import { newEnrollment } from '#shared/pki/new-enrollment.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import type { enrollmentRequestField } from './identity-fields.ts';

/** The writes of the outstanding enrollments a new identity is created with, committed with it. */
export async function enrollmentOps(
  identityId: string,
  requested: z.infer<typeof enrollmentRequestField>,
  context: WriteContext,
): Promise<WriteOp[]> {
  if (!requested) return [];
  const expiresAt = new Date(Date.parse(context.now) + DEFAULT_ENROLLMENT_MINUTES * 60_000).toISOString();
  const wanted: Pick<Enrollment, 'method' | 'caId' | 'username'>[] = [];
  const ops: WriteOp[] = [];
  if (requested.ott) wanted.push({ method: 'ott', caId: null, username: null });
  if (requested.ottca) wanted.push({ method: 'ottca', caId: requested.ottca, username: null });
  if (requested.updb) {
    wanted.push({ method: 'updb', caId: null, username: requested.updb });
    // The username must still be free when the identity enrolls; refuse it now if an authenticator holds it.
    ops.push(usernameFreeOp(context.deps, requested.updb, 'enrollment.updb'));
  }
  const docs = await Promise.all(
    wanted.map((fields) =>
      newEnrollment(context.deps, context.request.baseUrl, context.now, {
        id: newId(),
        identityId,
        expiresAt,
        ...fields,
      }),
    ),
  );
  for (const doc of docs) {
    // The enrollment's CA check speaks of its own field; the caller sent it as `enrollment.ottca`.
    const enrollmentOps = context.deps.store.createOps(enrollments, doc, ['identityId']).map((op) => ({
      ...op,
      ...(op.onConditionFailed
        ? { onConditionFailed: renameField(op.onConditionFailed, 'caId', 'enrollment.ottca') }
        : {}),
    }));
    ops.push(...enrollmentOps);
  }
  return ops;
}

function renameField(makeError: () => ApiError, from: string, to: string): () => ApiError {
  return () => {
    const error = makeError();
    const cause = error.apiCause;
    if (!cause || !('field' in cause) || cause.field !== from) return error;
    return invalidField(to, String(cause.reason).replace(from, to), cause.value);
  };
}
