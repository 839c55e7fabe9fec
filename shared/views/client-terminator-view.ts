import type { Service } from '../entities/service.ts';
import type { Terminator } from '../entities/terminator.ts';
import { entityRef, selfLinks } from './entity-ref.ts';

/** A terminator as the client API shows it (`terminatorClientDetail`): where it is hosted, not how it is reached. */
export function clientTerminatorView(terminator: Terminator, service: Service) {
  return {
    id: terminator.id,
    createdAt: terminator.createdAt,
    updatedAt: terminator.updatedAt,
    tags: terminator.tags,
    _links: selfLinks('terminators', terminator.id),
    serviceId: service.id,
    service: entityRef('services', service.id, service.name),
    routerId: terminator.router,
    identity: terminator.identity,
  };
}
