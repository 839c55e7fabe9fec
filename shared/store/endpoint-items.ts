import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Store } from './entity-store.ts';
import { keys } from './keys.ts';
import { readOptions } from './read-consistency.ts';

/**
 * A control channel endpoint process as the others find it (mesh design G.1.2): where it listens for messages relayed
 * to the routers it holds, and until when it said it lives. Each endpoint with a relay writes its own item before it
 * accepts routers and renews the lease while it runs; a router's connection item names the endpoint holding it, and
 * this item says where that endpoint is. The item goes by TTL a day after its lease: a dead task's is read as expired
 * meanwhile.
 */
export interface EndpointAddress {
  readonly endpointId: string;
  /** The address the other endpoints dial (a task's private IPv4 on AWS, 127.0.0.1 locally). */
  readonly host: string;
  readonly port: number;
  /** Epoch milliseconds until which the endpoint counts as running. */
  readonly leaseExpiresAt: number;
}

const TTL_AFTER_LEASE_SECONDS = 24 * 3600;

export async function putEndpointAddress(store: Store, address: EndpointAddress): Promise<void> {
  await store.db.send(
    new PutCommand({
      TableName: store.tableName,
      Item: {
        ...keys.endpoint(address.endpointId),
        ...address,
        expiresAtEpoch: Math.ceil(address.leaseExpiresAt / 1000) + TTL_AFTER_LEASE_SECONDS,
      },
    }),
  );
}

/** The endpoint's address while its lease runs; undefined when it never registered, ended or stopped renewing. */
export async function readEndpointAddress(
  store: Store,
  endpointId: string,
  now: Date,
): Promise<EndpointAddress | undefined> {
  const read = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: keys.endpoint(endpointId), ...readOptions('endpoint') }),
  );
  const item = read.Item;
  if (!item || typeof item.host !== 'string' || typeof item.port !== 'number') return undefined;
  const leaseExpiresAt = Number(item.leaseExpiresAt ?? 0);
  if (leaseExpiresAt <= now.getTime()) return undefined;
  return { endpointId, host: item.host, port: item.port, leaseExpiresAt };
}

/** The endpoint stopped (its routers reconnect elsewhere): the others no longer dial it. */
export async function removeEndpointAddress(store: Store, endpointId: string): Promise<void> {
  await store.db.send(new DeleteCommand({ TableName: store.tableName, Key: keys.endpoint(endpointId) }));
}
