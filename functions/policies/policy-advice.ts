import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { identities } from '#shared/entities/identity.ts';
import { services } from '#shared/entities/service.ts';
import { ok } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { EDGE_ROUTER_POLICY, grantOf, SERVICE_EDGE_ROUTER_POLICY, selectable } from '#shared/policy/access.ts';
import { policiesSelecting, RoleResolver, selectionsOf } from '#shared/policy/reach.ts';
import { entityRef } from '#shared/views/entity-ref.ts';
import { routerStatuses } from '#shared/views/router-status.ts';

/**
 * `GET /identities/{id}/policy-advice/{serviceId}`: whether the identity may dial or bind the service, how many edge
 * routers each may use, and the routers both may (a connection needs one of them online). Four waves: the identity
 * and service; their service, edge-router and service-edge-router policies; the routers those select; the common
 * routers' names and their control channels' connections (online while a lease runs). 404 when either is unknown.
 */
export const getIdentityPolicyAdvice: Operation = async (request, deps) => {
  const [identity, service] = await Promise.all([
    getOrNotFound(deps, identities, request.pathParameters.id ?? ''),
    getOrNotFound(deps, services, request.pathParameters.serviceId ?? ''),
  ]);
  const who = selectable(identity.doc);
  const what = selectable(service.doc);
  const [grant, identityPolicies, servicePolicies] = await Promise.all([
    grantOf(deps.store, who, what),
    policiesSelecting(deps.store, EDGE_ROUTER_POLICY, identities.collection, who),
    policiesSelecting(deps.store, SERVICE_EDGE_ROUTER_POLICY, services.collection, what),
  ]);
  const resolver = new RoleResolver(deps.store);
  const [ofIdentity, ofService] = await Promise.all([
    resolver.idsOfAny(edgeRouters.collection, selectionsOf(identityPolicies, 'edgeRouterRoles')),
    resolver.idsOfAny(edgeRouters.collection, selectionsOf(servicePolicies, 'edgeRouterRoles')),
  ]);
  const usable = new Set(ofService);
  const commonIds = ofIdentity.filter((id) => usable.has(id));
  const [common, statuses] = await Promise.all([
    deps.store.getMany(edgeRouters, commonIds),
    routerStatuses(deps, 'edge-routers', commonIds),
  ]);
  const online = new Set(commonIds.filter((_, index) => statuses[index]!.isOnline));
  return ok({
    identityId: identity.doc.id,
    identity: entityRef(identities.collection, identity.doc.id, identity.doc.name),
    serviceId: service.doc.id,
    service: entityRef(services.collection, service.doc.id, service.doc.name),
    isDialAllowed: grant.permissions.has('Dial'),
    isBindAllowed: grant.permissions.has('Bind'),
    identityRouterCount: ofIdentity.length,
    serviceRouterCount: ofService.length,
    commonRouters: common.map((router) => ({
      ...entityRef(edgeRouters.collection, router.id, router.name),
      isOnline: online.has(router.id),
    })),
  });
};
