/**
 * What the routers' control channel endpoints tell each other of the mesh through the change log
 * (`ctrl-changes.ts`), each written in the transaction of the change it tells of: a router's connection began or ended
 * (`router-connections.ts`), so every endpoint knows every router's presence and tells its own routers of their peers;
 * a link was reported, replaced, faulted or re-measured (`link-items.ts`), so every endpoint's link graph follows the
 * table. A dead endpoint writes nothing: what it held is noticed when the leases it renewed run out.
 */

/** The collection of a router's entity, which names its connection item. */
export type RouterCollection = 'edge-routers' | 'routers';

/** A router connected to an endpoint: what its peers are told of it. */
export interface RouterConnectedNotice {
  readonly kind: 'router-connected';
  readonly routerId: string;
  readonly collection: RouterCollection;
  readonly connectionId: string;
  readonly endpointId: string;
  readonly connectedAt: string;
  readonly leaseExpiresAt: number;
  /** The software version its hello reported. */
  readonly version: string;
  /** Its link listeners, each a `ctrl.Listener` as the router encoded it, base64. */
  readonly linkListeners: readonly string[];
}

/** A router's connection ended (its channel closed on the endpoint holding it). */
export interface RouterDisconnectedNotice {
  readonly kind: 'router-disconnected';
  readonly routerId: string;
  readonly collection: RouterCollection;
  readonly connectionId: string;
}

/** A link was faulted by one of its routers: whom the fault is passed on to. */
export interface LinkFaultNotice {
  readonly iteration: number;
  /** The link's other router, when the link was usable: told of the fault by whichever endpoint holds it. */
  readonly forwardTo?: string;
}

/** A link's item changed (reported, replaced, re-measured, removed): endpoints read it again. */
export interface LinkNotice {
  readonly kind: 'link';
  readonly linkId: string;
  /** The endpoint that wrote the change (it has applied it already). */
  readonly endpointId: string;
  readonly fault?: LinkFaultNotice;
}

export type MeshNotice = RouterConnectedNotice | RouterDisconnectedNotice | LinkNotice;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const collectionOf = (value: unknown): RouterCollection | undefined =>
  value === 'edge-routers' || value === 'routers' ? value : undefined;

/** A mesh notice as the change log read it back; undefined when the item is none (or not one this build reads). */
export function meshNoticeOf(item: Readonly<Record<string, unknown>>): MeshNotice | undefined {
  const routerId = text(item.routerId);
  const collection = collectionOf(item.collection);
  const connectionId = text(item.connectionId);
  switch (item.kind) {
    case 'router-connected': {
      const endpointId = text(item.endpointId);
      const connectedAt = text(item.connectedAt);
      if (!routerId || !collection || !connectionId || !endpointId || !connectedAt) return undefined;
      if (typeof item.leaseExpiresAt !== 'number') return undefined;
      const listeners = Array.isArray(item.linkListeners) ? item.linkListeners : [];
      return {
        kind: 'router-connected',
        routerId,
        collection,
        connectionId,
        endpointId,
        connectedAt,
        leaseExpiresAt: item.leaseExpiresAt,
        version: text(item.version) ?? '',
        linkListeners: listeners.filter((listener): listener is string => typeof listener === 'string'),
      };
    }
    case 'router-disconnected':
      if (!routerId || !collection || !connectionId) return undefined;
      return { kind: 'router-disconnected', routerId, collection, connectionId };
    case 'link': {
      const linkId = text(item.linkId);
      const endpointId = text(item.endpointId);
      if (!linkId || !endpointId) return undefined;
      const fault = item.fault as Record<string, unknown> | undefined;
      const forwardTo = text(fault?.forwardTo);
      return {
        kind: 'link',
        linkId,
        endpointId,
        ...(fault && typeof fault.iteration === 'number'
          ? { fault: { iteration: fault.iteration, ...(forwardTo ? { forwardTo } : {}) } }
          : {}),
      };
    }
    default:
      return undefined;
  }
}
