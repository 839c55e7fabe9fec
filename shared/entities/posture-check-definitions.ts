import type { BaseDocument, EntityDefinition } from './entity-definition.ts';
import { postureChecks } from './posture-check.ts';
import { postureCheckTypes } from './posture-check-types.ts';

/** The entity types of this part of the network model; `definitions.ts` lists them with the rest. */
export const POSTURE_CHECK_DEFINITIONS: readonly EntityDefinition<BaseDocument>[] = [
  postureCheckTypes,
  postureChecks,
] as unknown as EntityDefinition<BaseDocument>[];
