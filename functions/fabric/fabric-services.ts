import { crudOperations } from '#shared/crud/crud-operations.ts';
import { entityApi } from '#shared/crud/entity-api.ts';
import { services } from '#shared/entities/service.ts';
import { FABRIC_SERVICES } from '#shared/routes/groups/fabric-routes.ts';
import { selfLinks } from '#shared/views/entity-ref.ts';

/** A service as the fabric API shows it (the reference's fabric `serviceDetail`): what routing needs of it. */
const fabricServiceApi = entityApi({
  def: services,
  view: (_deps, service) => ({
    id: service.id,
    createdAt: service.createdAt,
    updatedAt: service.updatedAt,
    tags: service.tags,
    _links: selfLinks('services', service.id, { terminators: 'terminators' }),
    name: service.name,
    terminatorStrategy: service.terminatorStrategy,
    maxIdleTimeMillis: service.maxIdleTimeMillis,
  }),
});

/** `GET /services` and `GET /services/{id}` of the fabric API: the kit's list and detail of the stored services. */
export const fabricServiceOperations = crudOperations(FABRIC_SERVICES, fabricServiceApi);
