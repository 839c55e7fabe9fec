import type * as z from 'zod';
import { edgeRouterSchema, edgeRouters } from '#shared/entities/edge-router.ts';
import type { EdgeRouterPolicyRecord, ServiceEdgeRouterPolicyRecord } from '#shared/entities/policies.ts';
import { idsSelectedAmong, selectionsOf } from '#shared/policy/reach.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { appDataSchema } from '#shared/schemas/map-field.ts';
import { idOrderRecords } from '#shared/store/index-queries.ts';
import type { SessionRouter } from './session-view.ts';

/**
 * The edge routers of a session, from the routers' id-order records: one query of small items (each router's name,
 * cost, flags, role attributes and `appData`, `edgeRouters.idOrderFields`) instead of role-attribute partitions and a
 * read per router. A session's routers are often most of the network's, which one query reads for a few read units
 * where reading each router costs one (half, eventually consistent), and the selection of both policy kinds is then
 * worked out in memory: no wave waits on the policies' router roles.
 */

const routerRecordSchema = edgeRouterSchema
  .pick({ id: true, name: true, cost: true, noTraversal: true, disabled: true, roleAttributes: true })
  // Id-order items written before they carried `appData` lack it: those routers are read whole for the answer.
  .extend({ appData: appDataSchema.optional() });
export type RouterRecord = z.infer<typeof routerRecordSchema>;

/**
 * Every edge router's record, eventually consistent (routers are written by admins, never by the client asking).
 * A record that does not parse (damaged; the integrity scan repairs it) is left out and logged.
 */
export async function edgeRouterRecords(deps: Deps): Promise<RouterRecord[]> {
  const records = await idOrderRecords(deps.store, edgeRouters.collection, 'clientGrants');
  return records.flatMap((record) => {
    const parsed = routerRecordSchema.safeParse(record);
    if (parsed.success) return [parsed.data];
    deps.logger.warn('skipped an edge router id-order record that does not parse', { id: String(record.id) });
    return [];
  });
}

/**
 * The routers, among `records`, that one of the identity's edge router policies and one of the service's service edge
 * router policies select (the reference's rule for a session's routers), in id order.
 */
export function usableRouters(
  records: readonly RouterRecord[],
  identityPolicies: readonly EdgeRouterPolicyRecord[],
  servicePolicies: readonly ServiceEdgeRouterPolicyRecord[],
): RouterRecord[] {
  const routers = records.map((record) => ({ id: record.id, attributes: record.roleAttributes }));
  const ofService = new Set(idsSelectedAmong(routers, selectionsOf(servicePolicies, 'edgeRouterRoles')));
  const usable = new Set(
    idsSelectedAmong(routers, selectionsOf(identityPolicies, 'edgeRouterRoles')).filter((id) => ofService.has(id)),
  );
  return records.filter((record) => usable.has(record.id));
}

/**
 * The routers as a session shows them, by id: from their records, but for those whose record predates `appData`,
 * read whole (none once the integrity scan has rewritten the records).
 */
export async function sessionRouters(
  deps: Deps,
  routers: readonly RouterRecord[],
): Promise<ReadonlyMap<string, SessionRouter>> {
  const shown = new Map<string, SessionRouter>();
  const missing: string[] = [];
  for (const { id, appData, ...rest } of routers) {
    if (appData === undefined) missing.push(id);
    else shown.set(id, { ...rest, appData });
  }
  if (missing.length > 0) {
    for (const router of await deps.store.getMany(edgeRouters, missing, 'clientGrants')) {
      shown.set(router.id, router);
    }
  }
  return shown;
}
