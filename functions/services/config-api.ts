import * as z from 'zod';
import { sentFields, VIEW_CONCURRENCY } from '#shared/crud/crud-operations.ts';
import type { EntityApi, WriteContext } from '#shared/crud/entity-api.ts';
import { type Config, configs } from '#shared/entities/config.ts';
import { configTypes, jsonObjectSchema } from '#shared/entities/config-type.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import { idField, nameField, tagsField } from '#shared/schemas/common-fields.ts';
import { configView } from '#shared/views/config-view.ts';
import { nameLookup } from '#shared/views/name-lookup.ts';
import { validateConfigData } from './config-schema.ts';

const createSchema = z.object({
  name: nameField,
  configTypeId: idField,
  data: jsonObjectSchema,
  tags: tagsField.optional(),
});
// A config keeps its type: replace and patch bodies do not carry it.
const replaceSchema = z.object({ name: nameField, data: jsonObjectSchema, tags: tagsField.optional() });
const patchSchema = z.object({
  name: nameField.optional(),
  data: jsonObjectSchema.optional(),
  tags: tagsField.optional(),
});

type ConfigCreate = z.infer<typeof createSchema>;
type ConfigReplace = z.infer<typeof replaceSchema>;
type ConfigPatch = z.infer<typeof patchSchema>;

/** The config with its data checked against its type's schema (a missing type is the caller's to fix). */
async function checked(config: Config, context: WriteContext): Promise<Config> {
  const configType = await context.deps.store.get(configTypes, config.configTypeId);
  if (!configType) {
    throw invalidField('configTypeId', `no config type found with id ${config.configTypeId}`, config.configTypeId);
  }
  validateConfigData(configType.doc, config.data);
  return config;
}

export const configApi: EntityApi<Config, ConfigCreate, ConfigReplace, ConfigPatch> = {
  def: configs,
  createSchema,
  replaceSchema,
  patchSchema,
  create: async (input, context) => ({
    doc: await checked(
      {
        id: context.id,
        createdAt: context.now,
        updatedAt: context.now,
        name: input.name,
        configTypeId: input.configTypeId,
        data: input.data,
        tags: input.tags ?? {},
      },
      context,
    ),
  }),
  replace: (before, input, context) =>
    checked({ ...before, name: input.name, data: input.data, tags: input.tags ?? {} }, context),
  patch: (before, input, sent, context) => {
    const changed = sentFields(input, sent);
    return checked({ ...before, ...changed, tags: (sent.has('tags') ? input.tags : before.tags) ?? {} }, context);
  },
  view: async (deps, doc) => configView(doc, await nameLookup(deps, configTypes)(doc.configTypeId)),
  viewPage: (deps, docs) => {
    const typeName = nameLookup(deps, configTypes);
    return mapBounded(docs, VIEW_CONCURRENCY, async (doc) => configView(doc, await typeName(doc.configTypeId)));
  },
};
