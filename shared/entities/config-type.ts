import * as z from 'zod';
import { mapOf } from '../schemas/map-field.ts';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { SERVICE_ACCESS_MARKER } from './policies.ts';
import { servicesNotices } from './router-notice.ts';

/** What a config type configures: services (the default) or routers. */
export const CONFIG_TYPE_TARGETS = ['service', 'router'] as const;

/** A JSON object kept as sent, every key included (JSON Schemas, config data). */
export const jsonObjectSchema = mapOf(z.json());

export const configTypeSchema = z.object({
  ...baseDocumentShape,
  name: z.string(),
  /** The JSON Schema every config of the type satisfies; `{}` accepts any object. */
  schema: jsonObjectSchema,
  target: z.enum(CONFIG_TYPE_TARGETS),
});
export type ConfigType = z.infer<typeof configTypeSchema>;

export const configTypes: EntityDefinition<ConfigType> = {
  collection: 'config-types',
  readWhole: true,
  label: 'config type',
  schema: configTypeSchema,
  unique: ['name'],
  sortedBy: ['name'],
  filterable: { ...BASE_FILTERABLE, name: 'string', target: 'string' },
  changeMarkers: [SERVICE_ACCESS_MARKER],
  // What a tunneling router's own identity is granted may change: its data model follows (`router-notice.ts`).
  routerNotices: servicesNotices,
};
