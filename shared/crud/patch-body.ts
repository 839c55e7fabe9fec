import * as z from 'zod';
import type { Tags } from '../entities/entity-definition.ts';

/** The top-level keys a JSON object body had, which is what a PATCH changes. */
export function sentKeys(body: unknown): ReadonlySet<string> {
  return new Set(body !== null && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : []);
}

/** The fields of a parsed PATCH body its sender actually sent (schema defaults and absent keys left out). */
export function sentFields<T extends object>(input: T, sent: ReadonlySet<string>): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([key]) => sent.has(key))) as Partial<T>;
}

/** The `tags` a body sets: its own, or none when it has none or sends null. */
export function tagsOf(input: unknown): Tags {
  return (input as { tags?: Tags | null }).tags ?? {};
}

/**
 * The kit's PATCH body: the replace body's fields, each optional; with fields kept on null, each also takes null
 * (a field that already does is left as it is, so the API documents show it as the replace body does).
 */
export function patchSchemaOf(replaceSchema: z.ZodType, keptOnNull: readonly string[]): z.ZodType | undefined {
  if (!(replaceSchema instanceof z.ZodObject)) return undefined;
  const optional = replaceSchema.partial();
  if (keptOnNull.length === 0) return optional;
  const shape: Record<string, z.ZodType> = replaceSchema.shape;
  return optional.extend(
    Object.fromEntries(
      Object.entries(shape)
        .filter(([, field]) => !field.safeParse(null).success)
        .map(([key, field]) => [key, field.nullable().optional()]),
    ),
  );
}

/**
 * The replace body a PATCH amounts to: the stored document as a replace body, with the sent fields over it, except a
 * null sent for a field kept on null.
 */
export function mergedPatch<R>(
  current: R,
  changed: Readonly<Record<string, unknown>>,
  keptOnNull: readonly string[],
): R {
  const kept = Object.entries(changed).filter(([key, value]) => !(value === null && keptOnNull.includes(key)));
  return { ...current, ...Object.fromEntries(kept) };
}

/** The object a field's schema holds under its optional and nullable wrappers, if it holds one. */
export function objectOf(schema: z.ZodType): z.ZodObject | undefined {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
  return inner instanceof z.ZodObject ? inner : undefined;
}

/**
 * The PATCH body of a type whose body nests objects it changes field by field (an auth policy's `primary.updb`): every
 * field optional, and every nested object too, down to its single fields; a nested object may be null (nothing sent).
 */
export function nestedPatchSchema(replaceSchema: z.ZodType): z.ZodType | undefined {
  const object = objectOf(replaceSchema);
  if (!object) return undefined;
  const optional = (shape: Record<string, z.ZodType>): z.ZodObject =>
    z.object(
      Object.fromEntries(
        Object.entries(shape).map(([key, field]) => {
          const nested = objectOf(field);
          return [key, nested ? optional(nested.shape).nullable().optional() : field.optional()];
        }),
      ),
    );
  return optional(object.shape);
}

/** A JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The replace body a nested PATCH amounts to: each nested object of the stored document with the sent fields over it,
 * at every depth; a nested object sent as null changes nothing, a single field sent as null is null.
 */
export function mergedNested<R>(current: R, changed: Readonly<Record<string, unknown>>): R {
  const merged: Record<string, unknown> = { ...(current as Record<string, unknown>) };
  for (const [key, value] of Object.entries(changed)) {
    const before = merged[key];
    if (value === undefined) continue;
    if (!isPlainObject(before)) merged[key] = value;
    else if (isPlainObject(value)) merged[key] = mergedNested(before, value);
  }
  return merged as R;
}
