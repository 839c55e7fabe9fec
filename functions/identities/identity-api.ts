import * as z from 'zod';
import { endSessionsOps } from '#shared/auth/api-session-store.ts';
import { usernameFreeOp } from '#shared/auth/username-free.ts';
import { sentFields } from '#shared/crud/crud-operations.ts';
import type { EntityApi, WriteContext } from '#shared/crud/entity-api.ts';
import { DEFAULT_AUTH_POLICY_ID } from '#shared/entities/auth-policy.ts';
import { DEFAULT_ENROLLMENT_MINUTES, type Enrollment, enrollments } from '#shared/entities/enrollment.ts';
import { type Identity, identities, newIdentity } from '#shared/entities/identity.ts';
import { ApiError, invalidField } from '#shared/errors/api-error.ts';
import { newId, newToken } from '#shared/ids.ts';
import { withEnrollmentJwt } from '#shared/pki/enrollment-jwt.ts';
import {
  costField,
  idField,
  nameField,
  precedenceField,
  roleAttributesField,
  tagsField,
} from '#shared/schemas/common-fields.ts';
import { appDataSchema, mapOf } from '#shared/schemas/map-field.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { identityPageViews, identityView } from '#shared/views/identity-view.ts';

/** The API's identity types; User, Device and Service are kept as `Default`, as the reference does. */
const identityTypeField = z.enum(['User', 'Device', 'Service', 'Router', 'Default']);

const mutableFields = {
  // A blank policy is the default one (`fieldsFrom`), as the reference keeps it: the admin console's policy list
  // starts with an empty choice.
  authPolicyId: z.string().max(255).nullable().optional(),
  // Unique values are sort keys of their marker partition (at most 1,024 bytes): 255 characters always fit. A blank
  // one is no external id at all (stored as null, with no uniqueness marker), as the reference keeps it: the admin
  // console sends `""` whenever the field is left empty.
  externalId: z
    .string()
    .max(255)
    .nullable()
    .optional()
    .transform((value) => (value === undefined ? undefined : value?.trim() ? value : null)),
  roleAttributes: roleAttributesField.optional(),
  appData: appDataSchema.nullable().optional(),
  // A cleared number box sends null: cost 0, as the reference reads it.
  defaultHostingCost: costField.nullable().optional(),
  defaultHostingPrecedence: precedenceField.optional(),
  serviceHostingCosts: mapOf(costField).nullable().optional(),
  serviceHostingPrecedences: mapOf(precedenceField).nullable().optional(),
  tags: tagsField.optional(),
  // Fine-grained permissions are a BETA feature of the reference that this controller does not implement: accept
  // none rather than silently dropping what a caller meant to grant.
  permissions: z
    .array(z.string())
    .max(0, { message: 'permissions are not supported; use isAdmin' })
    .nullable()
    .optional(),
};

const createSchema = z.object({
  name: nameField,
  type: identityTypeField,
  isAdmin: z.boolean(),
  ...mutableFields,
  enrollment: z
    .object({
      ott: z.boolean().optional(),
      ottca: idField.optional(),
      updb: z.string().min(4).max(100).optional(),
    })
    .nullable()
    .optional(),
});

const replaceSchema = z.object({ name: nameField, type: identityTypeField, isAdmin: z.boolean(), ...mutableFields });

const patchSchema = z.object({
  name: nameField.optional(),
  type: identityTypeField.optional(),
  isAdmin: z.boolean().optional(),
  ...mutableFields,
});

type IdentityCreate = z.infer<typeof createSchema>;
type IdentityReplace = z.infer<typeof replaceSchema>;
type IdentityPatch = z.infer<typeof patchSchema>;

const typeIdOf = (type: IdentityReplace['type']) => (type === 'Router' ? 'Router' : 'Default');

/** The document fields a create or replace sets; absent optional fields take their zero values (PUT semantics). */
function fieldsFrom(
  input: IdentityReplace,
): Omit<
  Identity,
  | 'id'
  | 'createdAt'
  | 'updatedAt'
  | 'isDefaultAdmin'
  | 'disabled'
  | 'disabledAt'
  | 'disabledUntil'
  | 'envInfo'
  | 'sdkInfo'
> {
  return {
    name: input.name,
    typeId: typeIdOf(input.type),
    isAdmin: input.isAdmin,
    authPolicyId: input.authPolicyId?.trim() ? input.authPolicyId : DEFAULT_AUTH_POLICY_ID,
    externalId: input.externalId ?? null,
    roleAttributes: input.roleAttributes ?? [],
    appData: input.appData ?? {},
    defaultHostingCost: input.defaultHostingCost ?? 0,
    defaultHostingPrecedence: input.defaultHostingPrecedence ?? 'default',
    serviceHostingCosts: input.serviceHostingCosts ?? {},
    serviceHostingPrecedences: input.serviceHostingPrecedences ?? {},
    tags: input.tags ?? {},
  };
}

/** The outstanding enrollments asked for on create: `ott`, `ottca` (a CA id) and/or `updb` (a username). */
async function enrollmentsFor(
  identityId: string,
  input: IdentityCreate,
  context: WriteContext,
): Promise<{ docs: Enrollment[]; ops: WriteOp[] }> {
  const requested = input.enrollment;
  if (!requested) return { docs: [], ops: [] };
  const expiresAt = new Date(Date.parse(context.now) + DEFAULT_ENROLLMENT_MINUTES * 60_000).toISOString();
  const base = (method: Enrollment['method']): Enrollment => ({
    id: newId(),
    createdAt: context.now,
    updatedAt: context.now,
    tags: {},
    identityId,
    method,
    token: newToken(),
    expiresAt,
    caId: null,
    username: null,
  });
  const unsigned: Enrollment[] = [];
  const ops: WriteOp[] = [];
  if (requested.ott) unsigned.push(base('ott'));
  if (requested.ottca) unsigned.push({ ...base('ottca'), caId: requested.ottca });
  if (requested.updb) {
    unsigned.push({ ...base('updb'), username: requested.updb });
    // The username must still be free when the identity enrolls; refuse it now if an authenticator holds it.
    ops.push(usernameFreeOp(context.deps, requested.updb, 'enrollment.updb'));
  }
  const docs = await Promise.all(
    unsigned.map((doc) =>
      withEnrollmentJwt(context.deps.signers.server, context.request.baseUrl, doc, context.deps.config),
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
  return { docs, ops };
}

function renameField(makeError: () => ApiError, from: string, to: string): () => ApiError {
  return () => {
    const error = makeError();
    const cause = error.apiCause;
    if (!cause || !('field' in cause) || cause.field !== from) return error;
    return invalidField(to, String(cause.reason).replace(from, to), cause.value);
  };
}

/** A stored identity as the replace body that would produce it, so a patch is a replace of what was not sent. */
function asReplaceInput(identity: Identity): IdentityReplace {
  return {
    name: identity.name,
    type: identity.typeId === 'Router' ? 'Router' : 'Default',
    isAdmin: identity.isAdmin,
    authPolicyId: identity.authPolicyId,
    externalId: identity.externalId,
    roleAttributes: identity.roleAttributes,
    appData: identity.appData,
    defaultHostingCost: identity.defaultHostingCost,
    defaultHostingPrecedence: identity.defaultHostingPrecedence,
    serviceHostingCosts: identity.serviceHostingCosts,
    serviceHostingPrecedences: identity.serviceHostingPrecedences,
    tags: identity.tags,
  };
}

/** PATCH: the keys sent, over the identity as it is; a sent `null` clears a field as PUT would. */
function applyPatch(before: Identity, input: IdentityPatch, sent: ReadonlySet<string>): Identity {
  const changed: Partial<IdentityPatch> = sentFields(input, sent);
  return { ...before, ...fieldsFrom({ ...asReplaceInput(before), ...changed }) };
}

/** The default admin is how an operator gets back in: it cannot lose admin rights. */
function keepDefaultAdmin(before: Identity, next: Identity): Identity {
  if (before.isDefaultAdmin && !next.isAdmin)
    throw invalidField('isAdmin', 'the default admin must remain an admin', false);
  return next;
}

export const identityApi: EntityApi<Identity, IdentityCreate, IdentityReplace, IdentityPatch> = {
  def: identities,
  createSchema,
  replaceSchema,
  patchSchema,
  roleFilter: true,
  create: async (input, context) => {
    const doc = newIdentity({ id: context.id, createdAt: context.now, ...fieldsFrom(input) });
    return { doc, ops: (await enrollmentsFor(doc.id, input, context)).ops };
  },
  replace: (before, input) => keepDefaultAdmin(before, { ...before, ...fieldsFrom(input) }),
  patch: (before, input, sent) => keepDefaultAdmin(before, applyPatch(before, input, sent)),
  view: (deps, doc) => identityView(deps, doc),
  viewPage: identityPageViews,
  guard: (stored, action) => {
    if (action === 'delete' && stored.isDefaultAdmin) {
      throw new ApiError('ENTITY_CAN_NOT_BE_DELETED', { message: 'The default admin cannot be deleted.' });
    }
  },
  // Authenticators and enrollments are `cascade` children the kit deletes with the identity; its API sessions end too.
  deleteOps: (deps, stored, room) => endSessionsOps(deps, stored.doc.id, room),
};
