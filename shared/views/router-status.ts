import type { Deps } from '../ports/deps.ts';
import { isConnectedAt, type RouterConnection, readRouterConnections } from '../store/router-connections.ts';

/**
 * What a router view shows of the router's control channel: whether it is connected, its sync, its build, and where
 * SDKs reach it.
 */
export interface RouterStatus {
  readonly isOnline: boolean;
  readonly syncStatus: string;
  readonly hostname: string;
  readonly supportedProtocols: Readonly<Record<string, string>>;
  readonly version: string;
  readonly revision: string;
  readonly buildDate: string;
  readonly os: string;
  readonly arch: string;
}

/** What only a connected router reports: its build, host name and listeners. */
const NOTHING_REPORTED = {
  version: '',
  revision: '',
  buildDate: '',
  os: '',
  arch: '',
  hostname: '',
  supportedProtocols: {},
};

/** A router that never connected. */
const OFFLINE_UNKNOWN: RouterStatus = { isOnline: false, syncStatus: 'SYNC_UNKNOWN', ...NOTHING_REPORTED };

/**
 * A router's status from its connection item, in the reference's terms: never connected, `SYNC_UNKNOWN`; connected
 * (its lease running), online with the sync status its connection reached (`SYNC_NEW` until the edge hello is sent:
 * `ctrl-channel/edge-hello.ts`), the build its hello reported and, once its ClientHello came, its host name and
 * listeners; ended or its lease run out (its endpoint stopped hearing it, or died), offline and `SYNC_DISCONNECTED`,
 * its build and listeners no longer reported, as the reference shows only a connected router's.
 */
export function routerStatusOf(connection: RouterConnection | undefined, now: Date): RouterStatus {
  if (!connection) return OFFLINE_UNKNOWN;
  if (!isConnectedAt(connection, now)) {
    return { isOnline: false, syncStatus: 'SYNC_DISCONNECTED', ...NOTHING_REPORTED };
  }
  const { version, revision, buildDate, os, arch } = connection;
  return {
    isOnline: true,
    syncStatus: connection.syncStatus ?? 'SYNC_NEW',
    hostname: connection.hostname ?? '',
    supportedProtocols: connection.supportedProtocols ?? {},
    version,
    revision,
    buildDate,
    os,
    arch,
  };
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

/** A page of routers of one collection, each shown by `view` with its status (`routerStatuses`: one batch). */
export async function withRouterStatuses<R extends { readonly id: string }, V>(
  deps: Deps,
  collection: 'edge-routers' | 'routers',
  routers: readonly R[],
  view: (router: R, status: RouterStatus) => V,
): Promise<V[]> {
  const statuses = await routerStatuses(
    deps,
    collection,
    routers.map((router) => router.id),
  );
  return routers.map((router, index) => view(router, statuses[index]!));
}
