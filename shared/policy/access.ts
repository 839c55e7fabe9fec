import {
  type DialBind,
  type EdgeRouterPolicyRecord,
  edgeRouterPolicies,
  edgeRouterPolicyRecord,
  type ServiceEdgeRouterPolicyRecord,
  type ServicePolicyRecord,
  serviceEdgeRouterPolicies,
  serviceEdgeRouterPolicyRecord,
  servicePolicies,
  servicePolicyRecord,
} from '../entities/policies.ts';
import type { Store } from '../store/entity-store.ts';
import { type PolicyKind, policiesSelecting, RoleResolver, type Selectable, selectionsOf } from './reach.ts';
import { selectsEntity } from './roles.ts';

/**
 * The reach questions of the API, each in two waves of parallel queries (the policies selecting the entity, then the
 * entities those policies select), or one wave plus an in-memory check when both ends are known.
 */

export const SERVICE_POLICY: PolicyKind<ServicePolicyRecord> = { def: servicePolicies, record: servicePolicyRecord };
export const EDGE_ROUTER_POLICY: PolicyKind<EdgeRouterPolicyRecord> = {
  def: edgeRouterPolicies,
  record: edgeRouterPolicyRecord,
};
export const SERVICE_EDGE_ROUTER_POLICY: PolicyKind<ServiceEdgeRouterPolicyRecord> = {
  def: serviceEdgeRouterPolicies,
  record: serviceEdgeRouterPolicyRecord,
};

/** An entity with role attributes, as policies see it. */
export function selectable(doc: { readonly id: string; readonly roleAttributes?: readonly string[] }): Selectable {
  return { id: doc.id, attributes: doc.roleAttributes ?? [] };
}

/** What an identity may do with one service, and the service policies that grant it. */
export interface ServiceGrant {
  readonly permissions: ReadonlySet<DialBind>;
  readonly policies: readonly ServicePolicyRecord[];
}

/** Every service an identity may dial or bind, by id, with its grant. */
export async function servicesOfIdentity(store: Store, identity: Selectable): Promise<Map<string, ServiceGrant>> {
  const policies = await policiesSelecting(store, SERVICE_POLICY, 'identities', identity);
  return servicesGrantedBy(new RoleResolver(store), policies);
}

/**
 * The services an identity's service policies (already read with `policiesSelecting`) grant, by id, with their
 * grants: one wave, whose reads `resolver` shares with other resolutions made at the same time.
 */
export async function servicesGrantedBy(
  resolver: RoleResolver,
  policies: readonly ServicePolicyRecord[],
): Promise<Map<string, ServiceGrant>> {
  const selected = await Promise.all(
    policies.map((policy) => resolver.ids('services', { roles: policy.serviceRoles, semantic: policy.semantic })),
  );
  const grants = new Map<string, { permissions: Set<DialBind>; policies: ServicePolicyRecord[] }>();
  policies.forEach((policy, i) => {
    for (const serviceId of selected[i] ?? []) {
      const grant = grants.get(serviceId) ?? { permissions: new Set<DialBind>(), policies: [] };
      grant.permissions.add(policy.type);
      grant.policies.push(policy);
      grants.set(serviceId, grant);
    }
  });
  return grants;
}

/**
 * The service policies of an identity that grant it one service (known to the caller): one wave, then the service's
 * own roles are checked in memory.
 */
export async function grantOf(store: Store, identity: Selectable, service: Selectable): Promise<ServiceGrant> {
  return grantAmong(await policiesSelecting(store, SERVICE_POLICY, 'identities', identity), service);
}

/** The grant of one service among an identity's service policies (already read), checked in memory. */
export function grantAmong(policies: readonly ServicePolicyRecord[], service: Selectable): ServiceGrant {
  const granting = policies.filter((policy) => selectsEntity(policy.serviceRoles, policy.semantic, service));
  return { permissions: new Set(granting.map((policy) => policy.type)), policies: granting };
}

/** Every identity that may dial or bind a service, by id, with its permissions. */
export async function identitiesOfService(store: Store, service: Selectable): Promise<Map<string, Set<DialBind>>> {
  const policies = await policiesSelecting(store, SERVICE_POLICY, 'services', service);
  const resolver = new RoleResolver(store);
  const selected = await Promise.all(
    policies.map((policy) => resolver.ids('identities', { roles: policy.identityRoles, semantic: policy.semantic })),
  );
  const permissions = new Map<string, Set<DialBind>>();
  policies.forEach((policy, i) => {
    for (const identityId of selected[i] ?? []) {
      permissions.set(identityId, (permissions.get(identityId) ?? new Set<DialBind>()).add(policy.type));
    }
  });
  return permissions;
}

/** The edge routers an identity may use (edge router policies), sorted ids. */
export async function edgeRoutersOfIdentity(store: Store, identity: Selectable): Promise<string[]> {
  const policies = await policiesSelecting(store, EDGE_ROUTER_POLICY, 'identities', identity);
  return new RoleResolver(store).idsOfAny('edge-routers', selectionsOf(policies, 'edgeRouterRoles'));
}

/** The identities that may use an edge router (edge router policies), sorted ids. */
export async function identitiesOfEdgeRouter(store: Store, router: Selectable): Promise<string[]> {
  const policies = await policiesSelecting(store, EDGE_ROUTER_POLICY, 'edge-routers', router);
  return new RoleResolver(store).idsOfAny('identities', selectionsOf(policies, 'identityRoles'));
}

/** The edge routers a service may be reached through (service edge router policies), sorted ids. */
export async function edgeRoutersOfService(store: Store, service: Selectable): Promise<string[]> {
  const policies = await policiesSelecting(store, SERVICE_EDGE_ROUTER_POLICY, 'services', service);
  return new RoleResolver(store).idsOfAny('edge-routers', selectionsOf(policies, 'edgeRouterRoles'));
}

/** The services an edge router may carry (service edge router policies), sorted ids. */
export async function servicesOfEdgeRouter(store: Store, router: Selectable): Promise<string[]> {
  const policies = await policiesSelecting(store, SERVICE_EDGE_ROUTER_POLICY, 'edge-routers', router);
  return new RoleResolver(store).idsOfAny('services', selectionsOf(policies, 'serviceRoles'));
}

/**
 * The edge routers an identity may use to reach a service: those its edge router policies grant it and the
 * service's service edge router policies allow, sorted ids. Both sides are resolved in the same two waves.
 */
export async function edgeRoutersFor(store: Store, identity: Selectable, service: Selectable): Promise<string[]> {
  const resolver = new RoleResolver(store);
  const [identityPolicies, servicePolicies] = await Promise.all([
    policiesSelecting(store, EDGE_ROUTER_POLICY, 'identities', identity),
    policiesSelecting(store, SERVICE_EDGE_ROUTER_POLICY, 'services', service),
  ]);
  const [ofIdentity, ofService] = await Promise.all([
    resolver.idsOfAny('edge-routers', selectionsOf(identityPolicies, 'edgeRouterRoles')),
    resolver.idsOfAny('edge-routers', selectionsOf(servicePolicies, 'edgeRouterRoles')),
  ]);
  const allowed = new Set(ofService);
  return ofIdentity.filter((id) => allowed.has(id));
}
