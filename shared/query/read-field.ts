/**
 * Reads a dotted field such as `tags.env` from a record, walking nested objects. Only own properties are read, so
 * names such as `constructor` or `__proto__` never reach the prototype.
 *
 * @returns the value, or `undefined` when any step is missing or not an object.
 */
export function readField(record: Readonly<Record<string, unknown>>, path: string): unknown {
  let value: unknown = record;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) {
      return undefined;
    }
    value = (value as Readonly<Record<string, unknown>>)[key];
  }
  return value;
}
