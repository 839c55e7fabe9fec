import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { PRECEDENCES } from './identity.ts';

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
};
