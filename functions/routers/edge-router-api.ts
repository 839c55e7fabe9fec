import * as z from 'zod';
import { entityApi } from '#shared/crud/entity-api.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { identities } from '#shared/entities/identity.ts';
import { transitRouters } from '#shared/entities/router.ts';
import { nameField, roleAttributesField } from '#shared/schemas/common-fields.ts';
import { appDataSchema } from '#shared/schemas/map-field.ts';
import { deleteRouterConnectionOp } from '#shared/store/router-connections.ts';
import { edgeRouterViews } from '#shared/views/router-view.ts';
import { nameFreeAmong, newRouterEnrollment, routerFields, routerInputShape } from './router-fields.ts';
import { createTunnelingOps, syncTunnelingOps } from './router-tunneling.ts';

const createSchema = z.object({
  name: nameField,
  ...routerInputShape,
  appData: appDataSchema.nullable().optional(),
  isTunnelerEnabled: z.boolean().nullable().optional(),
  roleAttributes: roleAttributesField.optional(),
});

/** The stored fields a create or replace sets from its body; absent optional fields take their zero values. */
function edgeFields(input: z.infer<typeof createSchema>) {
  return {
    ...routerFields(input),
    appData: input.appData ?? {},
    isTunnelerEnabled: input.isTunnelerEnabled ?? false,
    roleAttributes: input.roleAttributes ?? [],
  };
}

/**
 * Edge routers. Creating one makes its one-time enrollment, and its router identity and system edge router policy
 * when it tunnels; an update creates, renames or deletes those as `isTunnelerEnabled` and the name say, and a delete
 * deletes them, each in the router's own transaction (its terminators are `cascade` children the kit deletes with it).
 */
export const edgeRouterApi = entityApi({
  def: edgeRouters,
  createSchema,
  replaceSchema: createSchema,
  keptOnNull: ['name'],
  roleFilter: true,
  create: async (input, context) => {
    const doc = { ...edgeFields(input), ...(await newRouterEnrollment(context, 'erott')) };
    const tunneling = doc.isTunnelerEnabled ? createTunnelingOps(context.deps, context.id, doc.name, context.now) : [];
    return { doc, ops: [nameFreeAmong(context.deps, transitRouters.collection, doc.name), ...tunneling] };
  },
  replace: (_before, input) => edgeFields(input),
  updateOps: async (_before, after, { deps, now }) => [
    nameFreeAmong(deps, transitRouters.collection, after.name),
    ...(await syncTunnelingOps(deps, after.id, after, now)),
  ],
  view: async (deps, doc) => (await edgeRouterViews(deps, [doc]))[0],
  viewPage: edgeRouterViews,
  deleteOps: async (deps, stored) => [
    deleteRouterConnectionOp(deps.store, 'edge-routers', stored.doc.id),
    ...(await syncTunnelingOps(deps, stored.doc.id, undefined)),
  ],
  // Its router identity (same id) goes with it, so policies naming that identity by `@id` lose it too.
  namedWith: (router) => [{ collection: identities.collection, id: router.id }],
});
