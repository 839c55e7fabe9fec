import type { BaseDocument, EntityDefinition } from './entity-definition.ts';
import { externalJwtSigners } from './external-jwt-signer.ts';

/** The entity types of this part of the network model; `definitions.ts` lists them with the rest. */
export const SIGNER_DEFINITIONS: readonly EntityDefinition<BaseDocument>[] = [
  externalJwtSigners,
] as unknown as EntityDefinition<BaseDocument>[];
