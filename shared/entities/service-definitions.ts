import { configs } from './config.ts';
import { configTypes } from './config-type.ts';
import type { BaseDocument, EntityDefinition } from './entity-definition.ts';
import { services } from './service.ts';

/** The entity types of this part of the network model; `definitions.ts` lists them with the rest. */
export const SERVICE_DEFINITIONS: readonly EntityDefinition<BaseDocument>[] = [
  configTypes,
  configs,
  services,
] as unknown as EntityDefinition<BaseDocument>[];
