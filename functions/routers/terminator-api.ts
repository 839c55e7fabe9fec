import * as z from 'zod';
import { entityApi } from '#shared/crud/entity-api.ts';
import { viewsSharing } from '#shared/crud/page-views.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { transitRouters } from '#shared/entities/router.ts';
import { type Terminator, terminators } from '#shared/entities/terminator.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { costField, idField, tagsField } from '#shared/schemas/common-fields.ts';
import { PRECEDENCES } from '#shared/schemas/precedence.ts';
import { terminatorNames, terminatorView } from '#shared/views/terminator-view.ts';

const addressField = z.string().min(1).max(4096);
const mutableShape = {
  cost: costField.nullable().optional(),
  // Blank is the default precedence, as the reference takes it: the admin console's terminator form sends `""`.
  precedence: z
    .enum(['', ...PRECEDENCES])
    .nullable()
    .optional(),
  tags: tagsField.optional(),
};
const replaceSchema = z.object({
  service: idField,
  router: idField,
  binding: z.string().min(1).max(255),
  address: addressField,
  ...mutableShape,
});
const createSchema = replaceSchema.extend({
  identity: z.string().max(255).nullable().optional(),
  identitySecret: z.base64().max(4096).nullable().optional(),
});

/** Which kind of router an id names, as the link fields hold it; a 400 naming `router` when it names none. */
async function routerLinks(deps: Deps, routerId: string) {
  if (await deps.store.get(edgeRouters, routerId)) return { edgeRouterId: routerId, transitRouterId: null };
  if (await deps.store.get(transitRouters, routerId)) return { edgeRouterId: null, transitRouterId: routerId };
  throw invalidField('router', `no router found with id ${routerId}`, routerId);
}

/** The fields a create or replace sets: the router's kind kept while the router stays, absent optional fields at zero. */
async function fieldsFrom(deps: Deps, input: z.infer<typeof replaceSchema>, before?: Terminator) {
  const links =
    before && before.router === input.router
      ? { edgeRouterId: before.edgeRouterId, transitRouterId: before.transitRouterId }
      : await routerLinks(deps, input.router);
  return {
    service: input.service,
    router: input.router,
    ...links,
    binding: input.binding,
    address: input.address,
    cost: input.cost ?? 0,
    precedence: input.precedence || 'default',
  };
}

/**
 * Terminators: where a router reaches a service's server. The service and the router must exist (checked in the
 * writing transaction by the kit's links) and deleting either deletes its terminators.
 */
export const terminatorApi = entityApi({
  def: terminators,
  createSchema,
  replaceSchema,
  create: async (input, { deps }) => ({
    doc: {
      ...(await fieldsFrom(deps, input)),
      identity: input.identity ?? '',
      identitySecret: input.identitySecret ?? null,
    },
  }),
  replace: (before, input, { deps }) => fieldsFrom(deps, input, before),
  ...viewsSharing(terminatorNames, terminatorView),
});
