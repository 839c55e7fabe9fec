import * as z from 'zod';
import { entityApi, type WriteContext } from '#shared/crud/entity-api.ts';
import { viewsSharing } from '#shared/crud/page-views.ts';
import { type Config, configs } from '#shared/entities/config.ts';
import { configTypes, jsonObjectSchema } from '#shared/entities/config-type.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { idField, nameField, tagsField } from '#shared/schemas/common-fields.ts';
import { configView } from '#shared/views/config-view.ts';
import { nameLookup } from '#shared/views/name-lookup.ts';
import { validateConfigData } from './config-schema.ts';

// A config keeps its type: replace and patch bodies do not carry it.
const replaceSchema = z.object({ name: nameField, data: jsonObjectSchema, tags: tagsField.optional() });
const createSchema = z.object({
  name: nameField,
  configTypeId: idField,
  data: jsonObjectSchema,
  tags: tagsField.optional(),
});

/** The fields a config's body sets, its data checked against its type's schema (a missing type is the caller's). */
async function checked(
  fields: Pick<Config, 'name' | 'configTypeId' | 'data'>,
  context: WriteContext,
): Promise<Pick<Config, 'name' | 'configTypeId' | 'data'>> {
  const configType = await context.deps.store.get(configTypes, fields.configTypeId);
  if (!configType) {
    throw invalidField('configTypeId', `no config type found with id ${fields.configTypeId}`, fields.configTypeId);
  }
  await validateConfigData(configType.doc, fields.data);
  return { name: fields.name, configTypeId: fields.configTypeId, data: fields.data };
}

export const configApi = entityApi({
  def: configs,
  createSchema,
  replaceSchema,
  create: async (input, context) => ({ doc: await checked(input, context) }),
  replace: (before, input, context) => checked({ ...input, configTypeId: before.configTypeId }, context),
  ...viewsSharing(
    (deps) => nameLookup(deps, configTypes),
    async (doc: Config, typeName) => configView(doc, await typeName(doc.configTypeId)),
  ),
});
