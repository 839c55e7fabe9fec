import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Store } from './entity-store.ts';
import { queryAll } from './index-queries.ts';
import { fitsKey, keys } from './keys.ts';
import { readOptions } from './read-consistency.ts';
import { unlessConditionFails } from './table-client.ts';

/**
 * A circuit an SDK dialed, as the table keeps it while it lives: the reference holds circuits in the controller's
 * memory, but here the router that ends one may be held by another endpoint process than the one that made it, and
 * `GET /sessions/{id}/route-path` is answered by a function. One small item a circuit, removed by the first fault that
 * ends it; a TTL removes what a lost fault left behind. Listed under its Dial session (GSI2) and with every circuit
 * (GSI1's `circuits` partition, which the fabric API lists; circuits stored before it are in the first only).
 */
export interface CircuitRecord {
  readonly id: string;
  /**
   * The Dial session the circuit was made for (the reference's circuit `clientId`); none for a tunneling router's own
   * circuit (an intercepted connection), whose client is the router.
   */
  readonly sessionId?: string;
  readonly serviceId: string;
  /** The routers the circuit runs through, ingress first. */
  readonly path: readonly string[];
  /**
   * The links between consecutive routers of the path (one fewer than the routers), the first router's to the second
   * first; absent on a circuit of one router, which has none.
   */
  readonly links?: readonly string[];
  readonly terminatorId: string;
  /** The dialing identity (a tunneling router's own identity, the router's id, for its circuits). */
  readonly clientId: string;
  /** The hosting identity (the terminator's). */
  readonly hostId: string;
  /** The endpoint process that made it. */
  readonly endpointId: string;
  readonly createdAt: string;
}

/**
 * How long a circuit's item outlives its last sign of life (its creation, a router's confirmation that it is idle but
 * still there) when no fault removes it: a safety net, longer than any circuit a router lets idle.
 */
export const CIRCUIT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const expiryOf = (now: Date) => Math.ceil((now.getTime() + CIRCUIT_TTL_MS) / 1000);

function circuitOf(item: Record<string, unknown> | undefined, now: Date): CircuitRecord | undefined {
  if (!item || typeof item.id !== 'string' || !Array.isArray(item.path)) return undefined;
  // DynamoDB removes expired items lazily: one past its time is gone already.
  if (typeof item.expiresAtEpoch === 'number' && item.expiresAtEpoch * 1000 <= now.getTime()) return undefined;
  const {
    PK: _pk,
    SK: _sk,
    GSI1PK: _everyPk,
    GSI1SK: _everySk,
    GSI2PK: _gsiPk,
    GSI2SK: _gsiSk,
    expiresAtEpoch: _ttl,
    ...circuit
  } = item;
  return circuit as unknown as CircuitRecord;
}

/** Records a new circuit (its id is a fresh UUID: one already stored is refused by the condition, never replaced). */
export async function putCircuit(store: Store, circuit: CircuitRecord, now: Date): Promise<void> {
  await store.db.send(
    new PutCommand({
      TableName: store.tableName,
      Item: {
        ...circuit,
        ...keys.circuit(circuit.id),
        GSI1PK: keys.circuitsIndex,
        GSI1SK: circuit.id,
        // Listed under its session (route-path); a tunneling router's own circuit has none.
        ...(circuit.sessionId ? { GSI2PK: keys.sessionCircuitsIndex(circuit.sessionId), GSI2SK: circuit.id } : {}),
        expiresAtEpoch: expiryOf(now),
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
}

/**
 * Whether a router is on a circuit's path: only such a router's word (its fault, its confirmation that the circuit
 * is idle) counts for the circuit. Another router names it only by mistake or in attack.
 */
export const isOnPath = (circuit: CircuitRecord, routerId: string): boolean => circuit.path.includes(routerId);

/**
 * Removes a circuit a router on its path reports ended ({@link isOnPath}, checked in the delete's condition) and
 * returns it; undefined when it was not stored, another fault removed it first, or the router is not on its path.
 */
export async function removeCircuit(
  store: Store,
  circuitId: string,
  reportedBy: string,
  now: Date,
): Promise<CircuitRecord | undefined> {
  const removed = await unlessConditionFails(
    store.db.send(
      new DeleteCommand({
        TableName: store.tableName,
        Key: keys.circuit(circuitId),
        // A list's `contains` is true only when the list is stored and holds the router's id.
        ConditionExpression: 'contains(#path, :reportedBy)',
        ExpressionAttributeNames: { '#path': 'path' },
        ExpressionAttributeValues: { ':reportedBy': reportedBy },
        ReturnValues: 'ALL_OLD',
      }),
    ),
  );
  return circuitOf(removed?.Attributes, now);
}

/**
 * The stored circuits among these ids, by id, each with when its item expires (epoch milliseconds); strongly read: a
 * circuit made a moment ago counts.
 */
export async function storedCircuits(
  store: Store,
  circuitIds: readonly string[],
  now: Date,
): Promise<Map<string, { circuit: CircuitRecord; expiresAtMs: number }>> {
  const distinct = [...new Set(circuitIds)];
  const items = await store.batchGet(distinct.map((id) => keys.circuit(id)));
  const stored = new Map<string, { circuit: CircuitRecord; expiresAtMs: number }>();
  for (const item of items) {
    const circuit = circuitOf(item, now);
    if (circuit) stored.set(circuit.id, { circuit, expiresAtMs: Number(item.expiresAtEpoch) * 1000 });
  }
  return stored;
}

/** Moves a circuit's expiry on (a router confirmed it is still there); nothing when it is no longer stored. */
export async function extendCircuit(store: Store, circuitId: string, now: Date): Promise<void> {
  await unlessConditionFails(
    store.db.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.circuit(circuitId),
        UpdateExpression: 'SET expiresAtEpoch = :ttl',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':ttl': expiryOf(now) },
      }),
    ),
  );
}

/** The circuits made for a Dial session, oldest first (the index is eventually consistent, as every GSI). */
export async function circuitsOfSession(store: Store, sessionId: string, now: Date): Promise<CircuitRecord[]> {
  const items = await queryAll(store, {
    IndexName: 'GSI2',
    KeyConditionExpression: 'GSI2PK = :partition',
    ExpressionAttributeValues: { ':partition': keys.sessionCircuitsIndex(sessionId) },
  });
  return items
    .map((item) => circuitOf(item, now))
    .filter((c): c is CircuitRecord => c !== undefined)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** One circuit by id, unless it ended (or expired); an id that fits no key names none. */
export async function readCircuit(store: Store, circuitId: string, now: Date): Promise<CircuitRecord | undefined> {
  if (!fitsKey(circuitId)) return undefined;
  const { Item } = await store.db.send(
    new GetCommand({ TableName: store.tableName, Key: keys.circuit(circuitId), ...readOptions('fabricState') }),
  );
  return circuitOf(Item, now);
}

/**
 * Every live circuit, in id order, from GSI1's `circuits` partition (eventually consistent: a circuit made a moment
 * ago may show a moment later): what the fabric API filters, sorts and pages.
 */
export async function everyCircuit(store: Store, now: Date): Promise<CircuitRecord[]> {
  const items = await queryAll(store, {
    IndexName: 'GSI1',
    KeyConditionExpression: 'GSI1PK = :circuits',
    ExpressionAttributeValues: { ':circuits': keys.circuitsIndex },
  });
  return items.map((item) => circuitOf(item, now)).filter((c): c is CircuitRecord => c !== undefined);
}
