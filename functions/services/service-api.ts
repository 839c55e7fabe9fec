import * as z from 'zod';
import { entityApi } from '#shared/crud/entity-api.ts';
import {
  DEFAULT_TERMINATOR_STRATEGY,
  type Service,
  services,
  TERMINATOR_STRATEGIES,
} from '#shared/entities/service.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { idField, nameField, roleAttributesField, tagsField } from '#shared/schemas/common-fields.ts';
import { serviceView } from '#shared/views/service-view.ts';
import { checkServiceConfigs } from './service-configs.ts';

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

/** The fields a create or replace sets (absent optional fields at their zero values), with its configs checked. */
async function fieldsFrom(deps: Deps, input: z.infer<typeof replaceSchema>) {
  const fields = {
    name: input.name,
    configs: input.configs ?? [],
    maxIdleTimeMillis: input.maxIdleTimeMillis ?? 0,
    roleAttributes: input.roleAttributes ?? [],
    terminatorStrategy: input.terminatorStrategy || DEFAULT_TERMINATOR_STRATEGY,
  } satisfies Partial<Service>;
  await checkServiceConfigs(deps, fields.configs);
  return fields;
}

export const serviceApi = entityApi({
  def: services,
  createSchema,
  replaceSchema,
  roleFilter: true,
  create: async (input, { deps }) => ({
    doc: { encryptionRequired: input.encryptionRequired ?? true, ...(await fieldsFrom(deps, input)) },
  }),
  replace: (_before, input, { deps }) => fieldsFrom(deps, input),
  view: (_deps, doc) => serviceView(doc),
});
