import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ctrlChangeOp } from './ctrl-changes.ts';
import type { Store } from './entity-store.ts';
import { queryAll } from './index-queries.ts';
import { keys } from './keys.ts';
import type { RouterCollection } from './mesh-notices.ts';
import { readOptions } from './read-consistency.ts';
import { unlessConditionFails, unlessTransactionConditionFails } from './table-client.ts';
import type { WriteOp } from './write-op.ts';

/**
 * A router's control channel connection as the table keeps it, one item a router, so that every endpoint process
 * (and every function showing a router) agrees on whether it is connected: the endpoint holding the channel writes it
 * when the hello is accepted and renews its lease while heartbeats are answered. The router is online while the lease
 * runs; an endpoint that dies stops renewing, and its routers go offline when their leases run out. Every connection
 * item is in one GSI2 partition (`readAllRouterConnections`), and its start and end are told to the other endpoints
 * through the change log (`router-connected`, `router-disconnected`), so each knows every router's presence and
 * tells its own routers of their peers.
 */
export interface RouterConnection {
  readonly routerId: string;
  /** The endpoint process holding the channel (its instance id). */
  readonly endpointId: string;
  /** This connection's id: only its own endpoint renews or ends it, never a replaced connection's. */
  readonly connectionId: string;
  readonly connectedAt: string;
  /** Epoch milliseconds until which the router counts as connected; 0 once the connection ended. */
  readonly leaseExpiresAt: number;
  readonly disconnectedAt?: string;
  readonly version: string;
  readonly revision: string;
  readonly buildDate: string;
  readonly os: string;
  readonly arch: string;
  /** How far the controller has brought the router's state (an edge router's; none until its edge hello is sent). */
  readonly syncStatus?: RouterSyncStatus;
  /** The host name an edge router's ClientHello names. */
  readonly hostname?: string;
  /** An edge router's listeners as SDKs dial them, by protocol (`tls` → `tls://er1.example:3022`). */
  readonly supportedProtocols?: Readonly<Record<string, string>>;
  /**
   * Where its peers dial it for links: each `ctrl.Listener` of its hello as it encoded it, base64 (none when it listens
   * for no links; a connection written before links were kept has none either).
   */
  readonly linkListeners?: readonly string[];
}

/**
 * The reference's sync statuses a connected edge router goes through (`controller/env/sync.go`): the edge hello sent,
 * the router's answer awaited (or not come in time), its state being sent, sent, or failed.
 */
export type RouterSyncStatus = 'SYNC_HELLO' | 'SYNC_HELLO_TIMEOUT' | 'SYNC_IN_PROGRESS' | 'SYNC_DONE' | 'SYNC_ERROR';

/** What an edge router's ClientHello says of where SDKs reach it. */
export interface RouterListeners {
  readonly hostname: string;
  readonly supportedProtocols: Readonly<Record<string, string>>;
}

export type { RouterCollection };

/**
 * Records a connection, replacing whatever the router had (a reconnect to this or another endpoint wins), and tells
 * the other endpoints (`router-connected`, in the same transaction); false, and nothing written, when the router is no
 * longer stored, is disabled, or no longer has the certificate it connected with (`fingerprint`: re-enrolled): a
 * delete, disable or re-enroll between the hello's certificate check and this write would otherwise leave a
 * connection the change did not end (its notice may have been read before the channel was there to close), its lease
 * renewed for as long as the channel lives.
 */
export async function putRouterConnection(
  store: Store,
  collection: RouterCollection,
  connection: RouterConnection,
  fingerprint: string,
): Promise<boolean> {
  const notice = {
    kind: 'router-connected',
    routerId: connection.routerId,
    collection,
    connectionId: connection.connectionId,
    endpointId: connection.endpointId,
    connectedAt: connection.connectedAt,
    leaseExpiresAt: connection.leaseExpiresAt,
    version: connection.version,
    linkListeners: connection.linkListeners ?? [],
  } as const;
  try {
    await store.db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            ConditionCheck: {
              TableName: store.tableName,
              Key: keys.entity(collection, connection.routerId),
              ConditionExpression:
                'attribute_exists(PK) AND (attribute_not_exists(disabled) OR disabled = :no) AND fingerprint = :fingerprint',
              ExpressionAttributeValues: { ':no': false, ':fingerprint': fingerprint },
            },
          },
          {
            Put: {
              TableName: store.tableName,
              Item: {
                ...connection,
                ...keys.ctrlChannel(collection, connection.routerId),
                GSI2PK: keys.routerConnectionsIndex(),
                GSI2SK: `${collection}#${connection.routerId}`,
              },
            },
          },
          ctrlChangeOp(store, notice, new Date(connection.connectedAt)).item,
        ],
      }),
    );
    return true;
  } catch (error) {
    const routerGone =
      error instanceof TransactionCanceledException &&
      error.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed';
    if (routerGone) return false;
    throw error;
  }
}

/** Moves the lease on; false when the connection is no longer this one (replaced by a newer one). */
export async function renewRouterLease(
  store: Store,
  collection: RouterCollection,
  routerId: string,
  connectionId: string,
  leaseExpiresAt: number,
): Promise<boolean> {
  const renewed = await unlessConditionFails(
    store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.ctrlChannel(collection, routerId),
        UpdateExpression: 'SET leaseExpiresAt = :lease',
        ConditionExpression: 'connectionId = :connection AND leaseExpiresAt > :zero',
        ExpressionAttributeValues: { ':lease': leaseExpiresAt, ':connection': connectionId, ':zero': 0 },
      }),
    ),
  );
  return renewed !== undefined;
}

/**
 * Ends the connection (the router is offline, disconnected at `at`) and tells the other endpoints
 * (`router-disconnected`), unless a newer connection replaced it.
 */
export async function endRouterConnection(
  store: Store,
  collection: RouterCollection,
  routerId: string,
  connectionId: string,
  at: string,
): Promise<void> {
  const notice = { kind: 'router-disconnected', routerId, collection, connectionId } as const;
  await unlessTransactionConditionFails(
    store.db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: store.tableName,
              Key: keys.ctrlChannel(collection, routerId),
              UpdateExpression: 'SET leaseExpiresAt = :zero, disconnectedAt = :at',
              ConditionExpression: 'connectionId = :connection',
              ExpressionAttributeValues: { ':zero': 0, ':at': at, ':connection': connectionId },
            },
          },
          ctrlChangeOp(store, notice, new Date(at)).item,
        ],
      }),
    ),
  );
}

/**
 * Records a connection's sync status and what its router said of its listeners, either or both; false, nothing
 * written, when the connection is no longer this one (replaced by a newer one, or the router deleted), so a late write
 * of a replaced connection never overwrites what a newer one recorded. `SYNC_HELLO` is written only as the first
 * status, and `SYNC_DONE` never over a failure.
 */
export async function recordRouterSync(
  store: Store,
  collection: RouterCollection,
  routerId: string,
  connectionId: string,
  update: { readonly syncStatus?: RouterSyncStatus; readonly listeners?: RouterListeners },
): Promise<boolean> {
  const values: Record<string, unknown> = { ':connection': connectionId };
  const sets: string[] = [];
  if (update.syncStatus !== undefined) {
    sets.push('syncStatus = :status');
    values[':status'] = update.syncStatus;
  }
  if (update.listeners !== undefined) {
    sets.push('hostname = :hostname', 'supportedProtocols = :protocols');
    values[':hostname'] = update.listeners.hostname;
    values[':protocols'] = update.listeners.supportedProtocols;
  }
  if (sets.length === 0) return true;
  // A sync that failed (its ClientHello refused, or none came) stays failed: a later feature's "done" does not hide it.
  const keepsFailure = update.syncStatus === 'SYNC_DONE';
  if (keepsFailure) {
    values[':error'] = 'SYNC_ERROR';
    values[':timeout'] = 'SYNC_HELLO_TIMEOUT';
  }
  // The first status, written beside the ServerHello: it may land after any later one, which it never replaces.
  const isFirst = update.syncStatus === 'SYNC_HELLO';
  const recorded = await unlessConditionFails(
    store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.ctrlChannel(collection, routerId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: keepsFailure
          ? 'connectionId = :connection AND NOT syncStatus IN (:error, :timeout)'
          : isFirst
            ? 'connectionId = :connection AND attribute_not_exists(syncStatus)'
            : 'connectionId = :connection',
        ExpressionAttributeValues: values,
      }),
    ),
  );
  return recorded !== undefined;
}

/**
 * Deletes a router's connection item with the router: its channel's next lease renewal then finds the connection
 * gone and the endpoint closes it.
 */
export function deleteRouterConnectionOp(store: Store, collection: RouterCollection, routerId: string): WriteOp {
  return { item: { Delete: { TableName: store.tableName, Key: keys.ctrlChannel(collection, routerId) } } };
}

function connectionOf(item: Record<string, unknown> | undefined): RouterConnection | undefined {
  if (!item || typeof item.routerId !== 'string' || typeof item.leaseExpiresAt !== 'number') return undefined;
  const { PK: _pk, SK: _sk, GSI2PK: _gsiPk, GSI2SK: _gsiSk, ...connection } = item;
  return connection as unknown as RouterConnection;
}

/**
 * Every router's connection item with its router's collection (ended ones too: a router once connected keeps its
 * item), read from the one index partition that holds them all: eventually consistent, as every index read, and a
 * moment behind the writes. A connection written before the index was laid (by an older build) is missing until its
 * router connects again.
 */
export async function readAllRouterConnections(
  store: Store,
): Promise<{ collection: RouterCollection; connection: RouterConnection }[]> {
  const items = await queryAll(store, {
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :pk',
    ExpressionAttributeValues: { ':pk': keys.routerConnectionsIndex() },
    ...readOptions('routerPresence'),
  });
  return items.flatMap((item) => {
    const collection = String(item.GSI2SK).split('#')[0];
    const connection = connectionOf(item);
    return connection && (collection === 'edge-routers' || collection === 'routers')
      ? [{ collection, connection }]
      : [];
  });
}

/** The connections of these routers, by router id (a router that never connected has none). */
export async function readRouterConnections(
  store: Store,
  collection: RouterCollection,
  routerIds: readonly string[],
): Promise<Map<string, RouterConnection>> {
  const distinct = [...new Set(routerIds)];
  if (distinct.length === 1) {
    const { Item } = await store.db.send(
      new GetCommand({
        TableName: store.tableName,
        Key: keys.ctrlChannel(collection, distinct[0]!),
        ...readOptions('ctrlChannel'),
      }),
    );
    const connection = connectionOf(Item);
    return new Map(connection ? [[connection.routerId, connection]] : []);
  }
  const items = await store.batchGet(
    distinct.map((id) => keys.ctrlChannel(collection, id)),
    undefined,
    'ctrlChannel',
  );
  const connections = items.map(connectionOf).filter((c): c is RouterConnection => c !== undefined);
  return new Map(connections.map((connection) => [connection.routerId, connection]));
}

/** Whether a router's connection is live at `now`: its lease runs (an ended one's is 0). */
export function isConnectedAt(connection: RouterConnection | undefined, now: Date): boolean {
  return connection !== undefined && connection.leaseExpiresAt > now.getTime();
}
