import * as z from 'zod';
import { sentFields } from '#shared/crud/crud-operations.ts';
import type { EntityApi, WriteContext } from '#shared/crud/entity-api.ts';
import { configs } from '#shared/entities/config.ts';
import { configTypes } from '#shared/entities/config-type.ts';
import {
  DEFAULT_TERMINATOR_STRATEGY,
  type Service,
  services,
  TERMINATOR_STRATEGIES,
} from '#shared/entities/service.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { idField, nameField, roleAttributesField, tagsField } from '#shared/schemas/common-fields.ts';
import { serviceView } from '#shared/views/service-view.ts';

const mutableFields = {
  // Each config is a link written with the service; a service has at most one per config type.
  configs: z.array(idField).max(32).nullable().optional(),
  maxIdleTimeMillis: z.number().int().min(0).nullable().optional(),
  roleAttributes: roleAttributesField.optional(),
  tags: tagsField.optional(),
  // Blank is the default strategy, as the reference takes it.
  terminatorStrategy: z
    .enum(['', ...TERMINATOR_STRATEGIES])
    .nullable()
    .optional(),
};

const createSchema = z.object({
  name: nameField,
  encryptionRequired: z.boolean().nullable().optional(),
  ...mutableFields,
});
// `encryptionRequired` is set at create: replace and patch ignore it, as the reference does.
const replaceSchema = z.object({ name: nameField, ...mutableFields });
const patchSchema = z.object({ name: nameField.optional(), ...mutableFields });

type ServiceCreate = z.infer<typeof createSchema>;
type ServiceReplace = z.infer<typeof replaceSchema>;
type ServicePatch = z.infer<typeof patchSchema>;

type ServiceFields = Pick<
  Service,
  'name' | 'configs' | 'maxIdleTimeMillis' | 'roleAttributes' | 'tags' | 'terminatorStrategy'
>;

/** The document fields a create or replace sets; absent optional fields take their zero values (PUT semantics). */
function fieldsFrom(input: ServiceReplace): ServiceFields {
  return {
    name: input.name,
    configs: input.configs ?? [],
    maxIdleTimeMillis: input.maxIdleTimeMillis ?? 0,
    roleAttributes: input.roleAttributes ?? [],
    tags: input.tags ?? {},
    terminatorStrategy: input.terminatorStrategy || DEFAULT_TERMINATOR_STRATEGY,
  };
}

/**
 * The configs must exist, configure services, and be of distinct config types. (The write itself checks again that
 * each still exists, and links them so they cannot be deleted while the service uses them.)
 */
async function checkConfigs(fields: ServiceFields, context: WriteContext): Promise<ServiceFields> {
  const ids = fields.configs;
  if (ids.length === 0) return fields;
  const { store } = context.deps;
  const found = await store.getMany(configs, ids);
  const missing = ids.find((id) => !found.some((config) => config.id === id));
  if (missing !== undefined) throw invalidField('configs', `no config found with id ${missing}`, ids);
  const types = await store.getMany(
    configTypes,
    found.map((config) => config.configTypeId),
  );
  const byType = new Map<string, string>();
  for (const config of found) {
    const type = types.find((candidate) => candidate.id === config.configTypeId);
    if (type && type.target !== 'service') {
      throw invalidField(
        'configs',
        `config ${config.name} has config type ${type.name} which does not target services`,
        ids,
      );
    }
    const other = byType.get(config.configTypeId);
    if (other !== undefined) {
      throw invalidField(
        'configs',
        `duplicate configs named ${other} and ${config.name} found for config type ${type?.name ?? config.configTypeId}. Only one config of a given type is allowed per service`,
        ids,
      );
    }
    byType.set(config.configTypeId, config.name);
  }
  if (ids.length !== found.length) throw invalidField('configs', 'a config is named more than once', ids);
  return fields;
}

/** A stored service as the replace body that would produce it, so a patch is a replace of what was not sent. */
function asReplaceInput(service: Service): ServiceReplace {
  return {
    name: service.name,
    configs: service.configs,
    maxIdleTimeMillis: service.maxIdleTimeMillis,
    roleAttributes: service.roleAttributes,
    tags: service.tags,
    terminatorStrategy: service.terminatorStrategy,
  };
}

export const serviceApi: EntityApi<Service, ServiceCreate, ServiceReplace, ServicePatch> = {
  def: services,
  createSchema,
  replaceSchema,
  patchSchema,
  roleFilter: true,
  create: async (input, context) => ({
    doc: {
      id: context.id,
      createdAt: context.now,
      updatedAt: context.now,
      encryptionRequired: input.encryptionRequired ?? true,
      ...(await checkConfigs(fieldsFrom(input), context)),
    },
  }),
  replace: async (before, input, context) => ({ ...before, ...(await checkConfigs(fieldsFrom(input), context)) }),
  patch: async (before, input, sent, context) => {
    const changed = sentFields(input, sent);
    return { ...before, ...(await checkConfigs(fieldsFrom({ ...asReplaceInput(before), ...changed }), context)) };
  },
  view: (_deps, doc) => serviceView(doc),
};
