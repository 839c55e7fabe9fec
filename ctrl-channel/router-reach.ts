import { type EdgeRouter, edgeRouters } from '#shared/entities/edge-router.ts';
import { identities } from '#shared/entities/identity.ts';
import { edgeRoutersOfIdentity, identitiesOfEdgeRouter, selectable } from '#shared/policy/access.ts';
import type { Deps } from '#shared/ports/deps.ts';
import type { ConnectingRouter } from './router-certificate.ts';

/**
 * Which identities may use which router: its edge router policies, as the reference's data model decides, and what
 * bounds all a router is given of the network's identities (their place in its data model, their API sessions). An
 * identity no policy lets use a router is never offered it (its sessions list only its policies' routers), so that
 * router needs nothing of it. A transit router serves no SDK: none.
 */

/** The ids of the identities that may use this router, sorted. */
export async function identitiesReaching(deps: Deps, router: ConnectingRouter): Promise<string[]> {
  return (await reachOfRouter(deps, router)).identityIds;
}

/** The router as stored (none for a transit router, or one deleted), and the ids of the identities that may use it. */
export async function reachOfRouter(
  deps: Deps,
  router: ConnectingRouter,
): Promise<{ stored?: EdgeRouter; identityIds: string[] }> {
  if (router.kind !== 'edge-router') return { identityIds: [] };
  const stored = await deps.store.get(edgeRouters, router.id);
  if (!stored) return { identityIds: [] };
  return { stored: stored.doc, identityIds: await identitiesOfEdgeRouter(deps.store, selectable(stored.doc)) };
}

/** The ids of the edge routers an identity may use; none when it is not stored. */
export async function routersReachedBy(deps: Deps, identityId: string): Promise<Set<string>> {
  const stored = await deps.store.get(identities, identityId);
  if (!stored) return new Set();
  return new Set(await edgeRoutersOfIdentity(deps.store, selectable(stored.doc)));
}
