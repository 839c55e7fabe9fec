import { crudOperations } from '#shared/crud/crud-operations.ts';
import { entityApi } from '#shared/crud/entity-api.ts';
import { viewsSharing } from '#shared/crud/page-views.ts';
import { type Terminator, terminators } from '#shared/entities/terminator.ts';
import { FABRIC_TERMINATORS } from '#shared/routes/groups/fabric-routes.ts';
import { entityRef } from '#shared/views/entity-ref.ts';
import { type TerminatorNames, terminatorNames, terminatorView } from '#shared/views/terminator-view.ts';

/**
 * A terminator as the fabric API shows it (the reference's fabric `terminatorDetail`): the management view's fields
 * under the fabric's names (the hosting instance is `instanceId`, the edge API's `identity`), its router in the
 * fabric's one `routers` collection, and the identity hosting it (`hostId`, empty for one an admin made), which the
 * fabric shows and the edge API does not.
 */
async function fabricTerminatorView(terminator: Terminator, names: TerminatorNames) {
  const view = await terminatorView(terminator, names);
  return {
    id: view.id,
    createdAt: view.createdAt,
    updatedAt: view.updatedAt,
    tags: view.tags,
    _links: view._links,
    serviceId: view.serviceId,
    service: view.service,
    routerId: view.routerId,
    router: entityRef('routers', view.routerId, view.router.name),
    binding: view.binding,
    address: view.address,
    instanceId: view.identity,
    cost: view.cost,
    precedence: view.precedence,
    dynamicCost: view.dynamicCost,
    hostId: terminator.hostId ?? '',
  };
}

/** `GET /terminators` and `GET /terminators/{id}` of the fabric API: the kit's list and detail of the stored ones. */
export const fabricTerminatorOperations = crudOperations(
  FABRIC_TERMINATORS,
  entityApi({ def: terminators, ...viewsSharing(terminatorNames, fabricTerminatorView) }),
);
