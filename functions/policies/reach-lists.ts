import { edgeRouters } from '#shared/entities/edge-router.ts';
import type { BaseDocument, EntityDefinition } from '#shared/entities/entity-definition.ts';
import { identities } from '#shared/entities/identity.ts';
import { DIAL_BIND, type DialBind } from '#shared/entities/policies.ts';
import { services } from '#shared/entities/service.ts';
import { invalidField } from '#shared/http/api-error.ts';
import { type Operation, type OperationRequest, queryValue } from '#shared/http/operation.ts';
import {
  EDGE_ROUTER_POLICY,
  edgeRoutersOfIdentity,
  edgeRoutersOfService,
  identitiesOfEdgeRouter,
  identitiesOfService,
  SERVICE_EDGE_ROUTER_POLICY,
  SERVICE_POLICY,
  selectable,
  servicesOfEdgeRouter,
  servicesOfIdentity,
} from '#shared/policy/access.ts';
import { type PolicyKind, policiesSelecting } from '#shared/policy/reach.ts';
import type { PolicySemantic } from '#shared/policy/roles.ts';
import { edgeRouterPolicyApi } from './edge-router-policy-api.ts';
import { type EntityViews, relatedList } from './entity-page.ts';
import { EDGE_ROUTER_VIEWS, IDENTITY_VIEWS, SERVICE_VIEWS } from './entity-views.ts';
import { serviceEdgeRouterPolicyApi } from './service-edge-router-policy-api.ts';
import { servicePolicyApi } from './service-policy-api.ts';

/** An entity policies select by role. */
type Selectable = BaseDocument & { readonly roleAttributes?: readonly string[] };

/**
 * `policyType=dial|bind` (any case) narrows a service/identity reach list to one permission; absent, both count. Any
 * other value is a 400 naming the parameter (the documents enumerate the two).
 */
function policyTypeOf(request: OperationRequest): DialBind | undefined {
  const value = queryValue(request, 'policyType');
  if (value === undefined || value === '') return undefined;
  const type = DIAL_BIND.find((candidate) => candidate.toLowerCase() === value.toLowerCase());
  if (!type) throw invalidField('policyType', 'policyType must be one of dial, bind', value);
  return type;
}

/** The ids whose permissions include the type asked for (any permission when none is). */
function withPermission(
  permissions: ReadonlyMap<string, { has(type: DialBind): boolean }>,
  type: DialBind | undefined,
): string[] {
  return [...permissions].filter(([, held]) => type === undefined || held.has(type)).map(([id]) => id);
}

/** `GET /<entities>/{id}/<policies>`: the policies of a kind that select the entity, as their list shows them. */
function policiesOf<
  E extends Selectable,
  R extends { readonly id: string; readonly semantic: PolicySemantic },
  P extends BaseDocument,
>(entities: EntityDefinition<E>, kind: PolicyKind<R>, views: EntityViews<P>): Operation {
  return relatedList(entities, views, async (deps, entity) => {
    const records = await policiesSelecting(deps.store, kind, entities.collection, selectable(entity));
    return records.map((record) => record.id);
  });
}

/**
 * The management reach lists: what an identity, a service or an edge router can reach through the policies, and the
 * policies that select it. Each is answered at read time (`shared/policy/access.ts`: two waves of parallel queries),
 * then paged, filtered and sorted like the type's own list.
 */
export const reachListOperations: Record<string, Operation> = {
  listIdentityServices: relatedList(identities, SERVICE_VIEWS, async (deps, identity, request) => {
    const type = policyTypeOf(request);
    const grants = await servicesOfIdentity(deps.store, selectable(identity));
    return withPermission(new Map([...grants].map(([id, grant]) => [id, grant.permissions])), type);
  }),
  listIdentityServicePolicies: policiesOf(identities, SERVICE_POLICY, servicePolicyApi),
  listIdentityEdgeRouters: relatedList(identities, EDGE_ROUTER_VIEWS, (deps, identity) =>
    edgeRoutersOfIdentity(deps.store, selectable(identity)),
  ),
  listIdentitysEdgeRouterPolicies: policiesOf(identities, EDGE_ROUTER_POLICY, edgeRouterPolicyApi),

  listServiceIdentities: relatedList(services, IDENTITY_VIEWS, async (deps, service, request) => {
    const type = policyTypeOf(request);
    return withPermission(await identitiesOfService(deps.store, selectable(service)), type);
  }),
  listServiceServicePolicies: policiesOf(services, SERVICE_POLICY, servicePolicyApi),
  listServiceEdgeRouters: relatedList(services, EDGE_ROUTER_VIEWS, (deps, service) =>
    edgeRoutersOfService(deps.store, selectable(service)),
  ),
  listServiceServiceEdgeRouterPolicies: policiesOf(services, SERVICE_EDGE_ROUTER_POLICY, serviceEdgeRouterPolicyApi),

  listEdgeRouterIdentities: relatedList(edgeRouters, IDENTITY_VIEWS, (deps, router) =>
    identitiesOfEdgeRouter(deps.store, selectable(router)),
  ),
  listEdgeRouterServices: relatedList(edgeRouters, SERVICE_VIEWS, (deps, router) =>
    servicesOfEdgeRouter(deps.store, selectable(router)),
  ),
  listEdgeRouterEdgeRouterPolicies: policiesOf(edgeRouters, EDGE_ROUTER_POLICY, edgeRouterPolicyApi),
  listEdgeRouterServiceEdgeRouterPolicies: policiesOf(
    edgeRouters,
    SERVICE_EDGE_ROUTER_POLICY,
    serviceEdgeRouterPolicyApi,
  ),
};
