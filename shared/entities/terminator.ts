import * as z from 'zod';
import { mapOf } from '../schemas/map-field.ts';
import { PRECEDENCES } from '../schemas/precedence.ts';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { terminatorNotices } from './router-notice.ts';

/** The most bytes of peer data a terminator keeps (the reference's hosting SDKs send a 32-byte public key). */
export const MAX_PEER_DATA_BYTES = 4096;

export const terminatorSchema = z.object({
  ...baseDocumentShape,
  /** The service's id, named as the reference's filters name it (`service = "<id>"`). */
  service: z.string(),
  /** The router's id, edge or transit; exactly one of the two links below holds it. */
  router: z.string(),
  /**
   * A link holds one collection, and edge and transit routers are two: the router's id is linked through the field of
   * its own type, so deleting either kind of router deletes its terminators.
   */
  edgeRouterId: z.string().nullable(),
  transitRouterId: z.string().nullable(),
  binding: z.string(),
  address: z.string(),
  identity: z.string(),
  /** Base64 bytes proving the hosting identity; kept for the router, never shown. */
  identitySecret: z.string().nullable(),
  cost: z.number().int(),
  precedence: z.enum(PRECEDENCES),
  /**
   * The identity whose SDK hosts the terminator (the reference's `hostId`), for a terminator a router made for an
   * SDK's Bind: a circuit names it in its tags, and a router's re-sent create must come from it. Shown by the fabric
   * API only (`hostId`), as the reference's edge APIs leave it out and its fabric API shows it.
   */
  hostId: z.string().optional(),
  /**
   * What the hosting SDK told its router for the dialing side (the reference's peer data, e.g. 1003, its public key
   * for end-to-end encryption): header id → base64 bytes, bounded (`MAX_PEER_DATA_BYTES`). A circuit hands it to the
   * dialer's router. Never shown.
   */
  peerData: mapOf(z.base64(), 2 * MAX_PEER_DATA_BYTES).optional(),
  /**
   * The router connection that last created or re-sent the terminator (`ConnectedRouter.connectionId`): one a router
   * did not re-send since it connected again is no longer hosted there. Never shown.
   */
  connectionId: z.string().optional(),
});
export type Terminator = z.infer<typeof terminatorSchema>;

export const terminators: EntityDefinition<Terminator> = {
  collection: 'terminators',
  label: 'terminator',
  schema: terminatorSchema,
  unique: [],
  // A terminator goes with its service and with its router, as in the reference.
  references: [
    { field: 'service', collection: 'services', onTargetDelete: 'cascade' },
    { field: 'edgeRouterId', collection: 'edge-routers', onTargetDelete: 'cascade' },
    { field: 'transitRouterId', collection: 'routers', onTargetDelete: 'cascade' },
  ],
  filterable: {
    ...BASE_FILTERABLE,
    service: 'string',
    router: 'string',
    binding: 'string',
    address: 'string',
    identity: 'string',
    cost: 'number',
    precedence: 'string',
  },
  // Every write (a router's, the management API's, a cascade's, a sweep's) tells the endpoints that keep the service's
  // terminators in memory to read them again.
  routerNotices: terminatorNotices,
};

/** A terminator's peer data as a router's message carries it: header id → bytes. */
export function peerDataOf(terminator: Pick<Terminator, 'peerData'>): Map<number, Buffer> {
  return new Map(
    Object.entries(terminator.peerData ?? {}).map(([key, value]) => [Number(key), Buffer.from(value, 'base64')]),
  );
}
