import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { identityRoleMarker } from './policies.ts';
import { servicesNotices } from './router-notice.ts';

/**
 * One of an identity's service-config overrides: for one service, the config of one config type the identity sees
 * instead of the service's own (client `GET /services` applies them). At most one per identity, service and config
 * type: the id is made of the three (`identityServiceConfigId`), so associating another config of the same type
 * replaces the override.
 */
export const identityServiceConfigSchema = z.object({
  ...baseDocumentShape,
  identityId: z.string(),
  serviceId: z.string(),
  configId: z.string(),
  configTypeId: z.string(),
});
export type IdentityServiceConfig = z.infer<typeof identityServiceConfigSchema>;

export function identityServiceConfigId(identityId: string, serviceId: string, configTypeId: string): string {
  return `${identityId}.${serviceId}.${configTypeId}`;
}

export const identityServiceConfigs: EntityDefinition<IdentityServiceConfig> = {
  collection: 'identity-service-configs',
  label: 'identity service config',
  schema: identityServiceConfigSchema,
  unique: [],
  references: [
    // Overrides go with their identity or their service; a config an override uses cannot be deleted.
    { field: 'identityId', collection: 'identities', onTargetDelete: 'cascade' },
    { field: 'serviceId', collection: 'services', onTargetDelete: 'cascade' },
    { field: 'configId', collection: 'configs', onTargetDelete: 'refuse' },
  ],
  parentOf: (doc) => ({ collection: 'identities', id: doc.identityId }),
  filterable: { ...BASE_FILTERABLE, identityId: 'string', serviceId: 'string', configId: 'string' },
  changeMarkers: (doc) => [identityRoleMarker(`@${doc.identityId}`)],
  // What a tunneling router's own identity is granted may change: its data model follows (`router-notice.ts`).
  routerNotices: servicesNotices,
};
