import { edgeRouters } from './edge-router.ts';
import type { BaseDocument, EntityDefinition } from './entity-definition.ts';
import { transitRouters } from './router.ts';
import { terminators } from './terminator.ts';

/** The entity types of this part of the network model; `definitions.ts` lists them with the rest. */
export const ROUTER_DEFINITIONS: readonly EntityDefinition<BaseDocument>[] = [
  edgeRouters,
  transitRouters,
  terminators,
] as unknown as EntityDefinition<BaseDocument>[];
