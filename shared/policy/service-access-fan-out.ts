import { configs } from '../entities/config.ts';
import type { BaseDocument, EntityDefinition } from '../entities/entity-definition.ts';
import { identityRoleMarker } from '../entities/policies.ts';
import { postureChecks } from '../entities/posture-check.ts';
import { services } from '../entities/service.ts';
import type { Deps } from '../ports/deps.ts';
import { referrerIds } from '../store/index-queries.ts';
import { SERVICE_POLICY, selectable } from './access.ts';
import { policiesSelecting } from './reach.ts';

/**
 * The `lastChangeAt` markers a change of a service, a config or a posture check moves: those of the identity roles
 * of the service policies that grant the service (or a service using the config, or that name the posture check), so
 * only identities that may see the change learn that something changed (`SERVICE_ACCESS_MARKER`). Finding them takes
 * reads, so they are moved after the write commits; the reads are bounded by the policies selecting the entity.
 */
const FAN_OUT_COLLECTIONS: ReadonlySet<string> = new Set([
  services.collection,
  configs.collection,
  postureChecks.collection,
]);

type RoleHolder = { readonly id: string; readonly roleAttributes?: readonly string[] };

async function identityRolesGranting(deps: Deps, collection: string, doc: RoleHolder): Promise<string[]> {
  const policies = await policiesSelecting(deps.store, SERVICE_POLICY, collection, selectable(doc));
  return policies.flatMap((policy) => policy.identityRoles);
}

async function identityRolesOf(deps: Deps, collection: string, doc: RoleHolder): Promise<string[]> {
  if (collection !== configs.collection) return identityRolesGranting(deps, collection, doc);
  const serviceIds = await referrerIds(deps.store, { collection, id: doc.id }, services.collection);
  const users = await deps.store.getMany(services, serviceIds);
  const roles = await Promise.all(users.map((service) => identityRolesGranting(deps, services.collection, service)));
  return roles.flat();
}

/**
 * Moves the markers of the identities that may see a changed service, config or posture check (every version
 * given: before and after a change of its attributes). Other types move theirs in their own transaction.
 */
export async function moveServiceAccessMarkers<D extends BaseDocument>(
  deps: Deps,
  def: EntityDefinition<D>,
  versions: readonly D[],
): Promise<void> {
  if (!FAN_OUT_COLLECTIONS.has(def.collection)) return;
  const roles = await Promise.all(
    versions.map((doc) => identityRolesOf(deps, def.collection, doc as unknown as RoleHolder)),
  );
  await deps.store.moveChangeMarkers(roles.flat().map(identityRoleMarker));
}
