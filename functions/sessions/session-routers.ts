import type * as z from 'zod';
import { edgeRouterSchema, edgeRouters } from '#shared/entities/edge-router.ts';
import type { EdgeRouterPolicyRecord, ServiceEdgeRouterPolicyRecord } from '#shared/entities/policies.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import { EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY } from '#shared/policy/access.ts';
import { idsSelectedAmong, policiesSelecting, type Selectable, selectionsOf } from '#shared/policy/reach.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { appDataSchema } from '#shared/schemas/map-field.ts';
import { idOrderRecords } from '#shared/store/index-queries.ts';
import type { ClientEdgeRouterFields } from '#shared/views/client-edge-router-view.ts';
import { type RouterStatus, routerStatuses } from '#shared/views/router-status.ts';

/**
 * What a session shows of one of its routers: its fields (an edge router's document, or its id-order record) and its
 * control channel's status (online, and where SDKs reach it).
 */
export type SessionRouter = ClientEdgeRouterFields & { readonly status: RouterStatus };

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
 * read whole (none once the integrity scan has rewritten the records), each with its status from its connection item;
 * the two reads go out together (the connection items in batches of 100, `routerStatuses`).
 */
export async function sessionRouters(
  deps: Deps,
  routers: readonly RouterRecord[],
): Promise<ReadonlyMap<string, SessionRouter>> {
  const fields = new Map<string, ClientEdgeRouterFields>();
  const missing: string[] = [];
  for (const { id, appData, ...rest } of routers) {
    if (appData === undefined) missing.push(id);
    else fields.set(id, { ...rest, appData });
  }
  const ids = routers.map((router) => router.id);
  const [whole, statuses] = await Promise.all([
    missing.length > 0 ? deps.store.getMany(edgeRouters, missing, 'clientGrants') : Promise.resolve([]),
    routerStatuses(deps, 'edge-routers', ids),
  ]);
  for (const router of whole) fields.set(router.id, router);
  const shown = new Map<string, SessionRouter>();
  ids.forEach((id, index) => {
    const found = fields.get(id);
    if (found) shown.set(id, { ...found, status: statuses[index]! });
  });
  return shown;
}

/** An identity and a service a session joins, as policies see them. */
export interface SessionEnds {
  readonly identity: Selectable;
  readonly service: Selectable;
}

/**
 * The routers each pair of an identity and a service may use now, as the reference works a session's routers out on
 * every answer (a session stores none: what it may use follows the policies as they change, and its item stays the
 * same size however many routers the network has). One wave: the edge router policies of each identity, the service
 * edge router policies of each service and every router's record, each read once however many pairs share it; then
 * one more, the usable routers' connection items (`sessionRouters`). Keyed by {@link sessionEndsKey}.
 */
export async function routersOfPairs(
  deps: Deps,
  pairs: readonly SessionEnds[],
): Promise<ReadonlyMap<string, readonly SessionRouter[]>> {
  if (pairs.length === 0) return new Map();
  const identitiesById = new Map(pairs.map(({ identity }) => [identity.id, identity]));
  const servicesById = new Map(pairs.map(({ service }) => [service.id, service]));
  const [records, identityPolicies, servicePolicies] = await Promise.all([
    edgeRouterRecords(deps),
    mapBounded([...identitiesById.values()], POLICY_READS_IN_FLIGHT, (identity) =>
      policiesSelecting(deps.store, EDGE_ROUTER_POLICY, 'identities', identity, 'clientGrants'),
    ),
    mapBounded([...servicesById.values()], POLICY_READS_IN_FLIGHT, (service) =>
      policiesSelecting(deps.store, SERVICE_EDGE_ROUTER_POLICY, 'services', service, 'clientGrants'),
    ),
  ]);
  const ofIdentity = new Map([...identitiesById.keys()].map((id, i) => [id, identityPolicies[i] ?? []]));
  const ofService = new Map([...servicesById.keys()].map((id, i) => [id, servicePolicies[i] ?? []]));
  const usableByPair = new Map(
    pairs.map(({ identity, service }) => [
      sessionEndsKey(identity.id, service.id),
      usableRouters(records, ofIdentity.get(identity.id) ?? [], ofService.get(service.id) ?? []),
    ]),
  );
  const shown = await sessionRouters(deps, [
    ...new Map([...usableByPair.values()].flat().map((r) => [r.id, r])).values(),
  ]);
  return new Map(
    [...usableByPair].map(([key, usable]) => [key, usable.flatMap((router) => shown.get(router.id) ?? [])]),
  );
}

/** The key of an identity and service pair in {@link routersOfPairs}' answer. */
export function sessionEndsKey(identityId: string, serviceId: string): string {
  return `${identityId}\n${serviceId}`;
}

/** Policy reads of a page of sessions in flight at once (a page holds at most a few hundred distinct ends). */
const POLICY_READS_IN_FLIGHT = 16;
