import { definitionOf } from '#shared/entities/definitions.ts';
import type { EdgeRouter } from '#shared/entities/edge-router.ts';
import { type Identity, identities, newIdentity } from '#shared/entities/identity.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { Stored } from '#shared/store/entity-store.ts';
import { referencesTo } from '#shared/store/index-queries.ts';
import type { WriteOp } from '#shared/store/write-op.ts';

/**
 * The identity a tunneling edge router acts as: type `Router`, with the router's id and name, as the reference makes it
 * (its system edge router policy: `router-system-policy.ts`). These writes commit in the router's own transaction.
 */
export function createRouterIdentityOps(deps: Deps, router: Pick<EdgeRouter, 'id' | 'name'>, now: string): WriteOp[] {
  return deps.store.createOps(
    identities,
    newIdentity({ id: router.id, name: router.name, createdAt: now, typeId: 'Router' }),
  );
}

/** Deleting the router identity with what goes with an identity: its `cascade` children and its API sessions. */
async function deleteRouterIdentityOps(deps: Deps, identity: Stored<Identity>): Promise<WriteOp[]> {
  const ops = deps.store.deleteOps(identities, identity.doc, identity.version);
  for (const link of await referencesTo(deps.store, identities.collection, identity.doc.id)) {
    const def = definitionOf(link.collection);
    if (link.onTargetDelete !== 'cascade' || !def) continue;
    for (const child of await deps.store.getMany(def, [link.id])) ops.push(...deps.store.deleteOps(def, child));
  }
  // Its sessions are refused from the commit on (their identity gone); its `ended` notice has the routers drop them.
  return ops;
}

/**
 * The writes that bring the router identity in line with the router as it will be (`after`; undefined when the router
 * is deleted): created when tunneling is turned on, renamed with the router, deleted when tunneling is turned off or the
 * router goes. Reads the identity as it is, so an identity an admin deleted meanwhile is simply not there.
 */
export async function syncRouterIdentityOps(
  deps: Deps,
  routerId: string,
  after: EdgeRouter | undefined,
  now: string,
): Promise<WriteOp[]> {
  const identity = await deps.store.get(identities, routerId);
  const isRouterIdentity = identity?.doc.typeId === 'Router';
  if (after?.isTunnelerEnabled) {
    if (!identity) return createRouterIdentityOps(deps, after, now);
    if (isRouterIdentity && identity.doc.name !== after.name) {
      return deps.store.replaceOps(identities, identity, { ...identity.doc, name: after.name, updatedAt: now });
    }
    return [];
  }
  return identity && isRouterIdentity ? deleteRouterIdentityOps(deps, identity) : [];
}
