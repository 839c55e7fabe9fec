/**
 * The type of a filterable field of a resource.
 * - `stringSet`: an array of strings, such as `roleAttributes`; filtered with `anyOf`, `allOf`, `count`, `isEmpty`.
 * - `map`: an object of scalar values, such as `tags`; filtered by key (`tags.env = "prod"`), each entry compared as
 *   the type of the literal it is compared with.
 */
export type FieldType = 'string' | 'number' | 'boolean' | 'datetime' | 'stringSet' | 'map';

/** The fields a list operation can filter and sort on, by dotted name. */
export type FilterableFields = Readonly<Record<string, FieldType>>;

/**
 * The type of a field named in a filter: its declared type, `mapEntry` for a key of a map field (`tags.env` when
 * `tags` is a map), or `undefined` for an unknown field.
 */
export function resolveFieldType(fields: FilterableFields, name: string): FieldType | 'mapEntry' | undefined {
  if (Object.hasOwn(fields, name)) return fields[name];
  for (let dot = name.indexOf('.'); dot !== -1; dot = name.indexOf('.', dot + 1)) {
    const prefix = name.slice(0, dot);
    if (Object.hasOwn(fields, prefix) && fields[prefix] === 'map') return 'mapEntry';
  }
  return undefined;
}
