import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { servicesNotices } from './router-notice.ts';

/** The terminator strategies the reference registers; a service names one of them. */
export const TERMINATOR_STRATEGIES = ['smartrouting', 'weighted', 'random', 'sticky'] as const;
export const DEFAULT_TERMINATOR_STRATEGY = 'smartrouting';

export const serviceSchema = z.object({
  ...baseDocumentShape,
  name: z.string(),
  /** Ids of configs, at most one per config type. */
  configs: z.array(z.string()),
  /** Set at create, never changed. */
  encryptionRequired: z.boolean(),
  maxIdleTimeMillis: z.number().int(),
  roleAttributes: z.array(z.string()),
  terminatorStrategy: z.enum(TERMINATOR_STRATEGIES),
});
export type Service = z.infer<typeof serviceSchema>;

export const services: EntityDefinition<Service> = {
  collection: 'services',
  label: 'service',
  schema: serviceSchema,
  unique: ['name'],
  sortedBy: ['name'],
  // A config a service uses cannot be deleted.
  references: [{ field: 'configs', collection: 'configs', onTargetDelete: 'refuse' }],
  filterable: {
    ...BASE_FILTERABLE,
    name: 'string',
    configs: 'stringSet',
    encryptionRequired: 'boolean',
    maxIdleTimeMillis: 'number',
    roleAttributes: 'stringSet',
    terminatorStrategy: 'string',
  },
  roleAttributesField: 'roleAttributes',
  // What the routers' data models hold of the policies may change: they follow (`router-notice.ts`).
  routerNotices: servicesNotices,
};
