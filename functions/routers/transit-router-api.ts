import { entityApi } from '#shared/crud/entity-api.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { transitRouters } from '#shared/entities/router.ts';
import { deleteRouterConnectionOp } from '#shared/store/router-connections.ts';
import { transitRouterViews } from '#shared/views/router-view.ts';
import { nameFreeAmong, newRouterEnrollment, routerCreateSchema, routerFields } from './router-fields.ts';

/** Transit routers: the same type behind `/transit-routers` and `/routers`. */
export const transitRouterApi = entityApi({
  def: transitRouters,
  createSchema: routerCreateSchema,
  replaceSchema: routerCreateSchema,
  keptOnNull: ['name'],
  create: async (input, context) => ({
    doc: { ...routerFields(input), ...(await newRouterEnrollment(context, 'trott')) },
    ops: [nameFreeAmong(context.deps, edgeRouters.collection, input.name)],
  }),
  replace: (_before, input) => routerFields(input),
  updateOps: (_before, after, { deps }) => [nameFreeAmong(deps, edgeRouters.collection, after.name)],
  view: async (deps, doc) => (await transitRouterViews(deps, [doc]))[0],
  viewPage: transitRouterViews,
  deleteOps: async (deps, stored) => [deleteRouterConnectionOp(deps.store, 'routers', stored.doc.id)],
});
