import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { jsonObjectSchema } from './config-type.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { servicesNotices } from './router-notice.ts';

export const configSchema = z.object({
  ...baseDocumentShape,
  name: z.string(),
  configTypeId: z.string(),
  /** Valid against the config type's schema when written. */
  data: jsonObjectSchema,
});
export type Config = z.infer<typeof configSchema>;

export const configs: EntityDefinition<Config> = {
  collection: 'configs',
  label: 'config',
  schema: configSchema,
  unique: ['name'],
  sortedBy: ['name'],
  // A config type with configs cannot be deleted.
  references: [{ field: 'configTypeId', collection: 'config-types', onTargetDelete: 'refuse' }],
  // The reference names the config type `type` in filters and sorts (what the admin console asks for when it lists
  // the configs of one type); `configTypeId` is the field the API shows.
  filterable: { ...BASE_FILTERABLE, name: 'string', configTypeId: 'string', type: { aliasOf: 'configTypeId' } },
  // What a tunneling router's own identity is granted may change: its data model follows (`router-notice.ts`).
  routerNotices: servicesNotices,
};
