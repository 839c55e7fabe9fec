import { edgeRouters } from '#shared/entities/edge-router.ts';
import type { BaseDocument, EntityDefinition } from '#shared/entities/entity-definition.ts';
import { identities } from '#shared/entities/identity.ts';
import { DIAL_BIND, type DialBind } from '#shared/entities/policies.ts';
import type { PolicySemantic } from '#shared/entities/policy-semantics.ts';
import { services } from '#shared/entities/service.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { type Operation, type OperationRequest, type QueryParameterDoc, queryValue } from '#shared/http/operation.ts';
import { EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY, SERVICE_POLICY, selectable } from '#shared/policy/access.ts';
import { type PolicyKind, policiesSelecting, RoleResolver, selectionsOf } from '#shared/policy/reach.ts';
import { parseRoles } from '#shared/policy/roles.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { edgeRouterPolicyApi } from './edge-router-policy-api.ts';
import { type EntityViews, type Members, relatedList } from './entity-page.ts';
import { EDGE_ROUTER_VIEWS, IDENTITY_VIEWS, SERVICE_VIEWS } from './entity-views.ts';
import { serviceEdgeRouterPolicyApi } from './service-edge-router-policy-api.ts';
import { servicePolicyApi } from './service-policy-api.ts';

/** An entity policies select by role. */
type Selectable = BaseDocument & { readonly roleAttributes?: readonly string[] };
/** A policy's evaluation record, as its selection items carry it. */
type PolicyRecord = { readonly id: string; readonly semantic: PolicySemantic };

const POLICY_TYPE_QUERY: QueryParameterDoc = {
  name: 'policyType',
  description: 'dial or bind: only what service policies of that type grant',
};

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

/**
 * What an entity reaches through the policies of a kind that select it: the entities of `toCollection` their
 * `toField` selects (the same answer as `shared/policy/access.ts`, two waves). When one of those policies selects
 * `#all`, the answer is every entity of the type, which the list pages from the type itself instead of reading every
 * id: a `#all` policy costs a reach list nothing however large the network.
 */
async function reached<R extends PolicyRecord>(
  deps: Deps,
  kind: PolicyKind<R>,
  from: { readonly collection: string; readonly entity: Selectable },
  to: { readonly field: keyof R & string; readonly collection: string },
  keep: (policy: R) => boolean = () => true,
): Promise<Members> {
  const policies = (await policiesSelecting(deps.store, kind, from.collection, selectable(from.entity))).filter(keep);
  const selections = selectionsOf(policies, to.field);
  if (selections.some((selection) => parseRoles(selection.roles).all)) return 'all';
  return new RoleResolver(deps.store).idsOfAny(to.collection, selections);
}

/** `GET /<entities>/{id}/<reached>`: what the entity reaches through the policies of a kind, as its list shows it. */
function reachList<E extends Selectable, R extends PolicyRecord, D extends BaseDocument>(
  entities: EntityDefinition<E>,
  kind: PolicyKind<R>,
  toField: keyof R & string,
  views: EntityViews<D>,
  byPolicyType = false,
): Operation {
  return relatedList(
    entities,
    views,
    (deps, entity, request) => {
      const type = byPolicyType ? policyTypeOf(request) : undefined;
      return reached(
        deps,
        kind,
        { collection: entities.collection, entity },
        { field: toField, collection: views.def.collection },
        (policy) => type === undefined || (policy as { readonly type?: DialBind }).type === type,
      );
    },
    byPolicyType ? [POLICY_TYPE_QUERY] : [],
  );
}

/** `GET /<entities>/{id}/<policies>`: the policies of a kind that select the entity, as their list shows them. */
function policiesOf<E extends Selectable, R extends PolicyRecord, P extends BaseDocument>(
  entities: EntityDefinition<E>,
  kind: PolicyKind<R>,
  views: EntityViews<P>,
): Operation {
  return relatedList(entities, views, async (deps, entity) => {
    const records = await policiesSelecting(deps.store, kind, entities.collection, selectable(entity));
    return records.map((record) => record.id);
  });
}

/**
 * The management reach lists: what an identity, a service or an edge router can reach through the policies, and the
 * policies that select it, answered at read time and paged, filtered and sorted like the type's own list.
 */
export const reachListOperations: Record<string, Operation> = {
  listIdentityServices: reachList(identities, SERVICE_POLICY, 'serviceRoles', SERVICE_VIEWS, true),
  listIdentityServicePolicies: policiesOf(identities, SERVICE_POLICY, servicePolicyApi),
  listIdentityEdgeRouters: reachList(identities, EDGE_ROUTER_POLICY, 'edgeRouterRoles', EDGE_ROUTER_VIEWS),
  listIdentitysEdgeRouterPolicies: policiesOf(identities, EDGE_ROUTER_POLICY, edgeRouterPolicyApi),

  listServiceIdentities: reachList(services, SERVICE_POLICY, 'identityRoles', IDENTITY_VIEWS, true),
  listServiceServicePolicies: policiesOf(services, SERVICE_POLICY, servicePolicyApi),
  listServiceEdgeRouters: reachList(services, SERVICE_EDGE_ROUTER_POLICY, 'edgeRouterRoles', EDGE_ROUTER_VIEWS),
  listServiceServiceEdgeRouterPolicies: policiesOf(services, SERVICE_EDGE_ROUTER_POLICY, serviceEdgeRouterPolicyApi),

  listEdgeRouterIdentities: reachList(edgeRouters, EDGE_ROUTER_POLICY, 'identityRoles', IDENTITY_VIEWS),
  listEdgeRouterServices: reachList(edgeRouters, SERVICE_EDGE_ROUTER_POLICY, 'serviceRoles', SERVICE_VIEWS),
  listEdgeRouterEdgeRouterPolicies: policiesOf(edgeRouters, EDGE_ROUTER_POLICY, edgeRouterPolicyApi),
  listEdgeRouterServiceEdgeRouterPolicies: policiesOf(
    edgeRouters,
    SERVICE_EDGE_ROUTER_POLICY,
    serviceEdgeRouterPolicyApi,
  ),
};
