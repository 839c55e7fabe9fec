import * as z from 'zod';
import type { WriteContext } from '#shared/crud/entity-api.ts';
import { DEFAULT_ENROLLMENT_MINUTES } from '#shared/entities/enrollment.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { newToken } from '#shared/ids.ts';
import { ctrlAddressOf } from '#shared/net/ctrl-address.ts';
import { signEnrollmentJwt } from '#shared/pki/enrollment-jwt.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { costField, nameField, tagsField } from '#shared/schemas/common-fields.ts';
import { uniqueValueFreeOp } from '#shared/store/partial-update.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

/** Fields every router takes on create, replace and patch; a sent `null` is the zero value, as the reference has it. */
export const routerInputShape = {
  cost: costField.nullable().optional(),
  disabled: z.boolean().nullable().optional(),
  noTraversal: z.boolean().nullable().optional(),
  tags: tagsField.optional(),
};

/** A router's create and replace body; a PATCH's null name keeps the name (`keptOnNull`). */
export const routerCreateSchema = z.object({ name: nameField, ...routerInputShape });
type RouterInput = z.infer<typeof routerCreateSchema>;

/** The stored fields a router's create or replace sets from its body (absent optional fields take zero values). */
export function routerFields(input: RouterInput) {
  return {
    name: input.name,
    cost: input.cost ?? 0,
    disabled: input.disabled ?? false,
    noTraversal: input.noTraversal ?? false,
  };
}

/**
 * A new router's one-time enrollment: a token good for the enrollment duration, not yet used, and its JWT (`erott`
 * for edge routers, `trott` for transit routers), signed once here by the enrollment key. The JWT names the control
 * channel's address (`ctrls`), which the router keeps and dials once enrolled.
 */
export async function newRouterEnrollment(context: WriteContext & { readonly id: string }, method: 'erott' | 'trott') {
  const { now } = context;
  const enrollmentToken = newToken();
  const enrollmentExpiresAt = new Date(Date.parse(now) + DEFAULT_ENROLLMENT_MINUTES * 60_000).toISOString();
  const enrollmentJwt = await signEnrollmentJwt(context.deps.signers.server, {
    method,
    subject: context.id,
    token: enrollmentToken,
    expiresAt: enrollmentExpiresAt,
    baseUrl: context.request.baseUrl,
    ctrls: [ctrlAddressOf(context.deps.config.ctrlAddress, context.request.baseUrl)],
  });
  return {
    enrollmentToken,
    enrollmentCreatedAt: now,
    enrollmentExpiresAt,
    enrollmentJwt,
    isVerified: false,
    fingerprint: null,
  };
}

/**
 * Router names are unique across edge and transit routers (one namespace in the reference): a write of one kind checks
 * in its transaction that the other kind holds no such name.
 */
export function nameFreeAmong(deps: Deps, otherCollection: string, name: string): WriteOp {
  return uniqueValueFreeOp(deps.store, otherCollection, 'name', name, () =>
    invalidField('name', `duplicate value '${name}' in unique index on routers store`, name),
  );
}
