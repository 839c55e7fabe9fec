import * as z from 'zod';
import { entityApi } from '#shared/crud/entity-api.ts';
import { DEFAULT_AUTH_POLICY_ID } from '#shared/entities/auth-policy.ts';
import { type Identity, identities, newIdentity } from '#shared/entities/identity.ts';
import { ApiError, invalidField } from '#shared/errors/api-error.ts';
import { nameField } from '#shared/schemas/common-fields.ts';
import { identityPageViews, identityView } from '#shared/views/identity-view.ts';
import { enrollmentRequestField, IDENTITY_FIELDS, identityTypeField } from './identity-fields.ts';

const replaceSchema = z.object({ name: nameField, type: identityTypeField, isAdmin: z.boolean(), ...IDENTITY_FIELDS });
const createSchema = replaceSchema.extend({ enrollment: enrollmentRequestField });

// User, Device and Service identities are kept as `Default`, as the reference keeps them.
const typeIdOf = (type: z.infer<typeof replaceSchema>['type']) => (type === 'Router' ? 'Router' : 'Default');
const typeOf = (typeId: string) => (typeId === 'Router' ? 'Router' : 'Default') as 'Router' | 'Default';

/** The document fields a create or replace sets; absent optional fields take their zero values (PUT semantics). */
function fieldsFrom(input: z.infer<typeof replaceSchema>) {
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
  } satisfies Partial<Identity>;
}

export const identityApi = entityApi({
  def: identities,
  createSchema,
  replaceSchema,
  roleFilter: true,
  create: async (input, context) => ({
    doc: newIdentity({ id: context.id, createdAt: context.now, ...fieldsFrom(input) }),
    // Loaded when an identity is created with enrollments: signing their JWTs is not the path of every create.
    ops: input.enrollment
      ? await (await import('./identity-enrollments.ts')).enrollmentOps(context.id, input.enrollment, context)
      : [],
  }),
  replace: (_before, input) => fieldsFrom(input),
  // The body names the type the document keeps as `typeId`.
  asInput: (identity) => ({ ...identity, type: typeOf(identity.typeId) }),
  // The default admin is how an operator gets back in: it cannot lose admin rights.
  updateOps: (before, after) => {
    if (before.isDefaultAdmin && !after.isAdmin) {
      throw invalidField('isAdmin', 'the default admin must remain an admin', false);
    }
    return [];
  },
  view: (deps, doc) => identityView(deps, doc),
  viewPage: identityPageViews,
  guard: (stored, action) => {
    if (action === 'delete' && stored.isDefaultAdmin) {
      throw new ApiError('ENTITY_CAN_NOT_BE_DELETED', { message: 'The default admin cannot be deleted.' });
    }
  },
  // Authenticators and enrollments are `cascade` children the kit deletes with the identity; its API sessions end with
  // it (refused from the commit on, their identity gone), and its `ended` notice has the routers drop them.
});
