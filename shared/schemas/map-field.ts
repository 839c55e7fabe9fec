import * as z from 'zod';

/**
 * The largest serialized size (UTF-8 JSON) of one free-form map. A DynamoDB item holds at most 400 KB, and an entity
 * carries several maps (tags, appData, hosting costs and precedences), so each gets a share well under that.
 */
export const MAX_MAP_BYTES = 64 * 1024;

/**
 * A free-form map of a resource (`tags`, `appData`, `serviceHostingCosts`, ...): every string key is data, kept and
 * returned as sent — `constructor`, `__proto__` and the empty string included. zod's own `record` assigns keys onto a
 * plain object, which silently drops `__proto__`; this one builds the result with `Object.fromEntries`, which defines
 * own properties. The map's serialized size is capped so that the entity fits a DynamoDB item; the store keeps maps as
 * JSON text (`keys.ts`), so no key ever becomes a DynamoDB attribute name.
 */
export function mapOf<V extends z.ZodType>(
  value: V,
  maxBytes: number = MAX_MAP_BYTES,
): z.ZodType<Record<string, z.output<V>>, unknown> {
  return z.unknown().transform((input, context) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      context.addIssue({ code: 'custom', message: 'expected an object whose values are of one type', input });
      return z.NEVER;
    }
    const entries: [string, z.output<V>][] = [];
    for (const [key, raw] of Object.entries(input)) {
      const parsed = value.safeParse(raw);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          context.addIssue({ ...issue, path: [key, ...issue.path] } as Parameters<typeof context.addIssue>[0]);
        }
        return z.NEVER;
      }
      entries.push([key, parsed.data as z.output<V>]);
    }
    const bytes = Buffer.byteLength(JSON.stringify(input), 'utf8');
    if (bytes > maxBytes) {
      context.addIssue({ code: 'custom', message: `is ${bytes} bytes as JSON; at most ${maxBytes} are kept`, input });
      return z.NEVER;
    }
    return Object.fromEntries(entries);
  });
}

/** Tag values: strings, booleans and null, as the reference allows. */
export const tagValue = z.union([z.string(), z.boolean(), z.null()]);

/** `appData` is the caller's own JSON object: any JSON value under each key (numbers, nested objects, arrays). */
export const appDataSchema = mapOf(z.json());
