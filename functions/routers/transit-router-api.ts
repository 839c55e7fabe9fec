import type { EntityApi } from '#shared/crud/entity-api.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { type TransitRouter, transitRouters } from '#shared/entities/router.ts';
import { transitRouterView } from '#shared/views/router-view.ts';
import {
  nameFreeAmong,
  newRouterEnrollment,
  patchedInput,
  type RouterInput,
  type RouterPatch,
  routerCreateSchema,
  routerFields,
  routerPatchSchema,
} from './router-fields.ts';

/** A stored router as the replace body that would produce it, so a patch is a replace of what was not sent. */
function asInput(router: TransitRouter): RouterInput {
  const { name, cost, disabled, noTraversal, tags } = router;
  return { name, cost, disabled, noTraversal, tags };
}

/** Transit routers: the same type behind `/transit-routers` and `/routers`. */
export const transitRouterApi: EntityApi<TransitRouter, RouterInput, RouterInput, RouterPatch> = {
  def: transitRouters,
  createSchema: routerCreateSchema,
  replaceSchema: routerCreateSchema,
  patchSchema: routerPatchSchema,
  create: async (input, context) => ({
    doc: {
      id: context.id,
      createdAt: context.now,
      updatedAt: context.now,
      ...routerFields(input),
      ...(await newRouterEnrollment(context, 'trott')),
    },
    ops: [nameFreeAmong(context.deps, edgeRouters.collection, input.name)],
  }),
  replace: (before, input) => ({ ...before, ...routerFields(input) }),
  patch: (before, input, sent) => ({ ...before, ...routerFields(patchedInput(asInput(before), input, sent)) }),
  updateOps: (doc, context) => [nameFreeAmong(context.deps, edgeRouters.collection, doc.name)],
  view: (_deps, doc) => transitRouterView(doc),
};
