import type * as z from 'zod';

/**
 * A JSON text attribute read back through `schema`, or `fallback` when it is missing, not JSON or not of the schema.
 * For items a request reads and then rewrites whole (posture data, failed service requests): a damaged one is read as
 * empty and the next write replaces it, instead of failing every request that meets it.
 */
export function parseStoredJson<T>(text: unknown, schema: z.ZodType<T>, fallback: T): T {
  if (typeof text !== 'string') return fallback;
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : fallback;
  } catch {
    return fallback;
  }
}
