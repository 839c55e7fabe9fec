import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { jsonObjectSchema } from './config-type.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';

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
  filterable: { ...BASE_FILTERABLE, name: 'string', configTypeId: 'string' },
};
