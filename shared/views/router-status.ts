import type { Deps } from '../ports/deps.ts';
import { type RouterConnection, readRouterConnections } from '../store/router-connections.ts';

/** What a router view shows of the router's control channel: whether it is connected, its sync, its build. */
export interface RouterStatus {
  readonly isOnline: boolean;
  readonly syncStatus: string;
  readonly version: string;
  readonly revision: string;
  readonly buildDate: string;
  readonly os: string;
  readonly arch: string;
}

const NO_BUILD = { version: '', revision: '', buildDate: '', os: '', arch: '' };

/**
 * A router's status from its connection item, in the reference's terms: never connected, `SYNC_UNKNOWN`; connected
 * (its lease running), online and `SYNC_NEW` (the hello is accepted and no state has been sent: the router data model
 * is not synchronised yet), with the build its hello reported; ended or its lease run out (its endpoint stopped
 * hearing it, or died), offline and `SYNC_DISCONNECTED`, its build no longer reported, as the reference shows only a
 * connected router's.
 */
export function routerStatusOf(connection: RouterConnection | undefined, now: Date): RouterStatus {
  if (!connection) return { isOnline: false, syncStatus: 'SYNC_UNKNOWN', ...NO_BUILD };
  if (connection.leaseExpiresAt <= now.getTime()) {
    return { isOnline: false, syncStatus: 'SYNC_DISCONNECTED', ...NO_BUILD };
  }
  const { version, revision, buildDate, os, arch } = connection;
  return { isOnline: true, syncStatus: 'SYNC_NEW', version, revision, buildDate, os, arch };
}

/** The statuses of a page of routers of one collection, read in one batch. */
export async function routerStatuses(
  deps: Deps,
  collection: 'edge-routers' | 'routers',
  routerIds: readonly string[],
): Promise<RouterStatus[]> {
  const connections = await readRouterConnections(deps.store, collection, routerIds);
  const now = deps.now();
  return routerIds.map((id) => routerStatusOf(connections.get(id), now));
}
