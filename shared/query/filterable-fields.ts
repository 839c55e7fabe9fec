/**
 * The type of a filterable field of a resource.
 * - `stringSet`: an array of strings, such as `roleAttributes`; filtered with `anyOf`, `allOf`, `count`, `isEmpty`.
 * - `map`: an object of scalar values, such as `tags`; filtered by key (`tags.env = "prod"`), each entry compared as
 *   the type of the literal it is compared with.
 */
export type FieldType = 'string' | 'number' | 'boolean' | 'datetime' | 'stringSet' | 'map';

/**
 * A second name for a field of the same resource, under which the reference offers it to filters and sorts (a
 * config's `type` is its `configTypeId`). Lists resolve it to that field before evaluating anything, so the stored
 * filter records never carry it. An alias names a whole field, never a map key, and never another alias.
 */
export interface FieldAlias {
  readonly aliasOf: string;
}

/** The fields a list operation can filter and sort on, by dotted name. */
export type FilterableFields = Readonly<Record<string, FieldType | FieldAlias>>;

/** The field a filter or sort name reads: the aliased field for an alias, else the name itself. */
export function canonicalField(fields: FilterableFields, name: string): string {
  const declared = Object.hasOwn(fields, name) ? fields[name] : undefined;
  return typeof declared === 'object' ? declared.aliasOf : name;
}

/**
 * The type of a field named in a filter: its declared type (an alias's is that of the field it names), `mapEntry`
 * for a key of a map field (`tags.env` when `tags` is a map), or `undefined` for an unknown field.
 */
export function resolveFieldType(fields: FilterableFields, name: string): FieldType | 'mapEntry' | undefined {
  const field = canonicalField(fields, name);
  if (Object.hasOwn(fields, field)) {
    const declared = fields[field];
    return typeof declared === 'string' ? declared : undefined;
  }
  for (let dot = field.indexOf('.'); dot !== -1; dot = field.indexOf('.', dot + 1)) {
    const prefix = field.slice(0, dot);
    if (Object.hasOwn(fields, prefix) && fields[prefix] === 'map') return 'mapEntry';
  }
  return undefined;
}
