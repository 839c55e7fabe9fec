import * as z from 'zod';

export const tagsSchema = z.record(z.string(), z.union([z.string(), z.boolean(), z.null()]));

/** The zod shape of the common fields; every entity schema extends it. */
export const baseDocumentShape = {
  id: z.string().min(1),
  createdAt: z.string(),
  updatedAt: z.string(),
  tags: tagsSchema,
};
