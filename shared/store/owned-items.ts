import { itemKindOf, keys, PREFIXES } from './keys.ts';

/**
 * Items kept per owner outside the kit, which go with their owner: an API session's posture data, an identity's failed
 * service requests. Each kind names its owner and where the owner is stored, so the integrity scan can tell one left
 * behind (its owner gone) without code of its own per kind.
 */
export interface OwnedKind {
  readonly kind: 'postureData' | 'failedRequests';
  /** How findings name the item and its owner. */
  readonly what: string;
  readonly owner: string;
  /** The key of the owner's item, which exists while the owner does. */
  readonly ownerKey: (ownerId: string) => { PK: string; SK: string };
}

const OWNED_KINDS: readonly OwnedKind[] = [
  { kind: 'postureData', what: 'posture data', owner: 'API session', ownerKey: keys.apiSessionPointer },
  {
    kind: 'failedRequests',
    what: 'failed service requests',
    owner: 'identity',
    ownerKey: (id) => keys.entity('identities', id),
  },
];

/** The kind of an owned item and its owner's id (from its key); undefined for items of other kinds. */
export function ownedKindOf(item: Readonly<Record<string, unknown>>): { kind: OwnedKind; ownerId: string } | undefined {
  const pk = String(item.PK);
  const kind = OWNED_KINDS.find((owned) => owned.kind === itemKindOf(pk));
  return kind ? { kind, ownerId: pk.slice(PREFIXES[kind.kind].length) } : undefined;
}
