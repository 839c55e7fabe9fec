import { keys, PREFIXES } from './keys.ts';

/**
 * Items kept per owner outside the kit, which go with their owner: an API session's posture data, an identity's failed
 * service requests, a router's control channel connection. Each kind names its owner and where the owner is stored, so
 * the integrity scan can tell one left behind (its owner gone) without code of its own per kind.
 */
export interface OwnedKind {
  /** The partition key of every item of the kind, up to the owner's id, which ends it. */
  readonly prefix: string;
  /** How findings name the item and its owner. */
  readonly what: string;
  readonly owner: string;
  /** The key of the owner's item, which exists while the owner does. */
  readonly ownerKey: (ownerId: string) => { PK: string; SK: string };
}

const identityKey = (id: string) => keys.entity('identities', id);

/** A router's connection item goes with its router (edge or transit). */
function routerConnectionKind(collection: string): OwnedKind {
  return {
    prefix: keys.ctrlChannel(collection, '').PK,
    what: 'control channel connection',
    owner: 'router',
    ownerKey: (id) => keys.entity(collection, id),
  };
}

const OWNED_KINDS: readonly OwnedKind[] = [
  routerConnectionKind('edge-routers'),
  routerConnectionKind('routers'),
  { prefix: PREFIXES.postureData, what: 'posture data', owner: 'API session', ownerKey: keys.apiSessionPointer },
  // An identity's own change marker is no item of its own but an attribute of the identity's item
  // (`change-markers.ts`); the markers of roles (`#…`) and the global one belong to nobody.
  { prefix: PREFIXES.failedRequests, what: 'failed service requests', owner: 'identity', ownerKey: identityKey },
];

/** The kind of an owned item and its owner's id (from its key); undefined for items of other kinds. */
export function ownedKindOf(item: Readonly<Record<string, unknown>>): { kind: OwnedKind; ownerId: string } | undefined {
  const pk = String(item.PK);
  const kind = OWNED_KINDS.find((owned) => pk.startsWith(owned.prefix) && pk.length > owned.prefix.length);
  return kind ? { kind, ownerId: pk.slice(kind.prefix.length) } : undefined;
}
