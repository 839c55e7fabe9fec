import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';

export const identityTypeSchema = z.object({ ...baseDocumentShape, name: z.string() });
export type IdentityType = z.infer<typeof identityTypeSchema>;

export const identityTypes: EntityDefinition<IdentityType> = {
  collection: 'identity-types',
  label: 'identity type',
  schema: identityTypeSchema,
  unique: ['name'],
  sortedBy: ['name'],
  filterable: { ...BASE_FILTERABLE, name: 'string' },
};

/** The seeded identity types; their ids equal their names, as in the reference controller. */
export const SEEDED_IDENTITY_TYPES = ['Default', 'Router'] as const;
