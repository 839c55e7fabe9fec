import * as z from 'zod';
import { mapOf, tagValue } from '../schemas/map-field.ts';

export const tagsSchema = mapOf(tagValue);

/** The zod shape of the common fields; every entity schema extends it. */
export const baseDocumentShape = {
  id: z.string().min(1),
  createdAt: z.string(),
  updatedAt: z.string(),
  tags: tagsSchema,
};
