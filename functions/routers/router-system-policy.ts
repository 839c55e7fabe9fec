import type { EdgeRouter } from '#shared/entities/edge-router.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { identities } from '#shared/entities/identity.ts';
import { type EdgeRouterPolicy, edgeRouterPolicies } from '#shared/entities/policies.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { Stored } from '#shared/store/entity-store.ts';
import { keys } from '#shared/store/keys.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

/** The reference's name for a tunneling router's system edge router policy. */
export function systemPolicyName(routerId: string): string {
  return `edge-router-${routerId}-system`;
}

/**
 * The system edge router policy of a tunneling router, as the reference keeps it: its id is the router's, and it lets
 * the router's own identity (same id) use the router.
 */
export function systemPolicyOf(routerId: string, now: string): EdgeRouterPolicy {
  return {
    id: routerId,
    createdAt: now,
    updatedAt: now,
    tags: {},
    name: systemPolicyName(routerId),
    semantic: 'AnyOf',
    identityRoles: [`@${routerId}`],
    edgeRouterRoles: [`@${routerId}`],
    isSystem: true,
  };
}

/**
 * The writes that create the system policy in the router's own transaction. The policy names the router and its
 * identity by `@id`, which the kit checks exist; both are written in this same transaction, which DynamoDB does not
 * let one transaction also check, so those two checks are left out.
 */
export function createSystemPolicyOps(deps: Deps, routerId: string, now: string): WriteOp[] {
  const written = new Set(
    [keys.entity(edgeRouters.collection, routerId), keys.entity(identities.collection, routerId)].map(
      (key) => `${key.PK}|${key.SK}`,
    ),
  );
  return deps.store.createOps(edgeRouterPolicies, systemPolicyOf(routerId, now)).filter((op) => {
    const key = op.item.ConditionCheck?.Key;
    return !key || !written.has(`${String(key.PK)}|${String(key.SK)}`);
  });
}

/**
 * The writes that bring the system policy in line with the router as it will be (`after`; undefined when the router
 * is deleted): created when tunneling is on and it is missing (routers that tunneled before system policies existed
 * get theirs on their next update), deleted when tunneling is off or the router goes.
 */
export async function syncSystemPolicyOps(
  deps: Deps,
  routerId: string,
  after: EdgeRouter | undefined,
  now: string,
): Promise<WriteOp[]> {
  const policy: Stored<EdgeRouterPolicy> | undefined = await deps.store.get(edgeRouterPolicies, routerId);
  if (after?.isTunnelerEnabled) return policy ? [] : createSystemPolicyOps(deps, routerId, now);
  return policy?.doc.isSystem ? deps.store.deleteOps(edgeRouterPolicies, policy.doc, policy.version) : [];
}
