import * as z from 'zod';
import { sentFields } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
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
const patchSchema = z.object({ name: configTypeName.optional(), ...mutableFields });

type ConfigTypeCreate = z.infer<typeof createSchema>;
type ConfigTypeReplace = z.infer<typeof replaceSchema>;
type ConfigTypePatch = z.infer<typeof patchSchema>;

/** The fields a create or replace sets, with a schema that compiles (absent: one that accepts any object). */
function fieldsFrom(input: ConfigTypeReplace): Pick<ConfigType, 'name' | 'schema' | 'tags'> {
  const schema = input.schema ?? {};
  compileConfigTypeSchema(schema);
  return { name: input.name, schema, tags: input.tags ?? {} };
}

export const configTypeApi: EntityApi<ConfigType, ConfigTypeCreate, ConfigTypeReplace, ConfigTypePatch> = {
  def: configTypes,
  createSchema,
  replaceSchema,
  patchSchema,
  create: (input, context) => ({
    doc: {
      id: context.id,
      createdAt: context.now,
      updatedAt: context.now,
      target: input.target ?? 'service',
      ...fieldsFrom(input),
    },
  }),
  replace: (before, input) => ({ ...before, ...fieldsFrom(input) }),
  patch: (before, input, sent) => {
    const changed = sentFields(input, sent);
    return { ...before, ...fieldsFrom({ name: before.name, schema: before.schema, tags: before.tags, ...changed }) };
  },
  view: (_deps, doc) => configTypeView(doc),
};
