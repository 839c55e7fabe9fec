import * as z from 'zod';
import { entityApi } from '#shared/crud/entity-api.ts';
import { CONFIG_TYPE_TARGETS, type ConfigType, configTypes, jsonObjectSchema } from '#shared/entities/config-type.ts';
import { nameField, tagsField } from '#shared/schemas/common-fields.ts';
import { configTypeView } from '#shared/views/config-type-view.ts';
import { compileConfigTypeSchema } from './config-schema.ts';

/** `all` asks for every config type wherever config types are named, so no type may be called that. */
const configTypeName = nameField.refine((name) => name !== 'all', {
  message: 'all is a keyword and may not be used as a config type name',
});

const mutableFields = {
  schema: jsonObjectSchema.nullable().optional(),
  tags: tagsField.optional(),
};

const createSchema = z.object({
  name: configTypeName,
  target: z.enum(CONFIG_TYPE_TARGETS).nullable().optional(),
  ...mutableFields,
});
// The target is fixed at create: replace and patch bodies do not carry it.
const replaceSchema = z.object({ name: configTypeName, ...mutableFields });

/** The fields a create or replace sets, with a schema that compiles (absent: one that accepts any object). */
async function fieldsFrom(input: z.infer<typeof replaceSchema>): Promise<Pick<ConfigType, 'name' | 'schema'>> {
  const schema = input.schema ?? {};
  await compileConfigTypeSchema(schema);
  return { name: input.name, schema };
}

export const configTypeApi = entityApi({
  def: configTypes,
  createSchema,
  replaceSchema,
  create: async (input) => ({ doc: { target: input.target ?? 'service', ...(await fieldsFrom(input)) } }),
  replace: (_before, input) => fieldsFrom(input),
  view: (_deps, doc) => configTypeView(doc),
});
