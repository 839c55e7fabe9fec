import type { EdgeRouter } from '#shared/entities/edge-router.ts';
import { identities } from '#shared/entities/identity.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { namedRoleWrites, writesBeside } from '#shared/store/policies-naming.ts';
import type { WriteOp } from '#shared/store/write-op.ts';
import { createRouterIdentityOps, syncRouterIdentityOps } from './router-identity.ts';
import { createSystemPolicyOps, syncSystemPolicyOps } from './router-system-policy.ts';

/** What tunneling gives a new router, written in its own transaction: its router identity and system policy. */
export function createTunnelingOps(deps: Deps, routerId: string, name: string, now: string): WriteOp[] {
  return [...createRouterIdentityOps(deps, { id: routerId, name }, now), ...createSystemPolicyOps(deps, routerId, now)];
}

/**
 * The writes that bring what tunneling gives a router (its identity and its system edge router policy) in line with
 * the router as it will be (`after`; undefined when it is deleted), read together.
 */
export async function syncTunnelingOps(
  deps: Deps,
  routerId: string,
  after: EdgeRouter | undefined,
  now = deps.now().toISOString(),
): Promise<WriteOp[]> {
  // Turning tunneling off deletes the router identity, so the policies naming it by `@id` lose it in the same change
  // (a router's delete has that done by `deleteEntity`: see `namedWith`).
  const naming =
    after && !after.isTunnelerEnabled
      ? await namedRoleWrites(deps.store, [{ collection: identities.collection, id: routerId }])
      : [];
  const [policyOps, identityOps] = await Promise.all([
    syncSystemPolicyOps(deps, routerId, after, now),
    syncRouterIdentityOps(deps, routerId, after, now),
  ]);
  const ops = [...identityOps, ...policyOps];
  return [...ops, ...writesBeside(naming, ops)];
}
