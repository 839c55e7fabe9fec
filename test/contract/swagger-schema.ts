/**
 * Swagger 2.0 Schema Object → JSON Schema (draft-07, as ajv 8 reads it by default).
 *
 * - `$ref: '#/definitions/X'` becomes `<docId>#/definitions/X` so that the converted `definitions` can be registered
 *   once with ajv under `docId` and referenced from any response schema. Keywords beside a `$ref` are ignored, as
 *   Swagger 2.0 says. Any other `$ref` form is an error (the bundled documents have none).
 * - `x-nullable: true` also allows `null`: `type: T` becomes `type: [T, 'null']` (plus `null` in `enum`); a schema
 *   with `$ref`/`allOf`/no `type` is wrapped as `anyOf: [{type: 'null'}, schema]`. Swagger 2.0 has no `null` type
 *   nor `anyOf`, so any `type: 'null'`/`anyOf` error ajv reports comes from this wrapping ({@link isNullableNoise}).
 * - boolean `exclusiveMaximum`/`exclusiveMinimum` (draft-04 style) become draft-07 numbers.
 * - `type: file` imposes nothing.
 * - Annotation and vendor keywords are dropped: `description`, `title`, `default`, `example`, `readOnly`,
 *   `discriminator`, `xml`, `externalDocs`, `x-*` (so `x-omitempty` has no effect: an omitted field is only a
 *   mismatch when `required` lists it).
 * - `additionalProperties` is kept as written (absent = allowed); `required` only when it is an array.
 * - A `null` schema (YAML `items:` with nothing after it) imposes nothing.
 *
 * @module
 */
import type { ErrorObject } from 'ajv';
import { isJsonObject, type JsonObject } from './spec-source.ts';

type MutableSchema = { [key: string]: unknown };

/** Validation keywords copied verbatim. */
const PLAIN = new Set([
  'type',
  'format',
  'enum',
  'multipleOf',
  'maximum',
  'minimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
]);
/** Keywords whose value is a map of name → schema. */
const SCHEMA_MAPS = new Set(['properties', 'definitions', 'patternProperties']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);

/**
 * Converted schema object → where it came from in the Swagger document (`#/definitions/X/allOf/1`, or
 * `GET /x responses/200/schema` for inline response schemas); used to point error messages at the document.
 */
export const schemaLocations = new WeakMap<object, string>();

/** Rewrites a Swagger `$ref` into an absolute reference inside the document registered as `docId`. */
export function rewriteRef(ref: string, docId: string): string {
  const prefix = '#/definitions/';
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref ${JSON.stringify(ref)} (only ${prefix}* is handled)`);
  return `${docId}${ref}`;
}

function mapValues(value: unknown, docId: string, where: string): MutableSchema {
  if (!isJsonObject(value)) throw new Error(`${where} must be an object`);
  const out: MutableSchema = {};
  for (const [name, schema] of Object.entries(value)) out[name] = toJsonSchema(schema, docId, `${where}/${name}`);
  return out;
}

/** Lets `null` through as well. */
function allowNull(schema: MutableSchema): MutableSchema {
  const composite = ['$ref', 'allOf', 'anyOf', 'oneOf', 'not'].some((k) => k in schema);
  if (typeof schema.type === 'string' && !composite) {
    const out: MutableSchema = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) out.enum = [...schema.enum, null];
    return out;
  }
  if (Object.keys(schema).length === 0) return schema;
  return { anyOf: [{ type: 'null' }, schema] };
}

/**
 * Converts one Swagger 2.0 schema (and everything below it).
 * @param docId the ajv `$id` the converted `definitions` are registered under.
 * @param where a JSON-pointer-ish location for error messages.
 */
export function toJsonSchema(schema: unknown, docId: string, where = '#'): unknown {
  if (typeof schema === 'boolean') return schema;
  // `items: null` (YAML `items:` with no value; management `controllerSettingsList`) constrains nothing.
  if (schema === null) return {};
  if (!isJsonObject(schema)) throw new Error(`${where}: a schema must be an object, got ${JSON.stringify(schema)}`);

  let out: MutableSchema = {};
  if (typeof schema.$ref === 'string') {
    out.$ref = rewriteRef(schema.$ref, docId);
  } else {
    for (const [key, value] of Object.entries(schema)) {
      const at = `${where}/${key}`;
      if (PLAIN.has(key)) {
        if (key === 'type' && value === 'file') continue;
        out[key] = value;
      } else if (key === 'required') {
        if (Array.isArray(value)) out.required = value;
      } else if (SCHEMA_MAPS.has(key)) {
        out[key] = mapValues(value, docId, at);
      } else if (SCHEMA_LISTS.has(key)) {
        if (!Array.isArray(value)) throw new Error(`${at} must be an array`);
        out[key] = value.map((s: unknown, i) => toJsonSchema(s, docId, `${at}/${i}`));
      } else if (key === 'items') {
        out.items = Array.isArray(value)
          ? value.map((s: unknown, i) => toJsonSchema(s, docId, `${at}/${i}`))
          : toJsonSchema(value, docId, at);
      } else if (key === 'additionalProperties' || key === 'not') {
        out[key] = toJsonSchema(value, docId, at);
      }
      // everything else is an annotation, a Swagger-only keyword or a vendor extension: dropped
    }
    for (const [flag, bound] of [
      ['exclusiveMaximum', 'maximum'],
      ['exclusiveMinimum', 'minimum'],
    ] as const) {
      const exclusive = schema[flag];
      if (exclusive === true && typeof schema[bound] === 'number') {
        out[flag] = schema[bound];
        delete out[bound];
      } else if (typeof exclusive === 'number') {
        out[flag] = exclusive;
      }
    }
  }
  schemaLocations.set(out, where);
  if (schema['x-nullable'] === true) {
    out = allowNull(out);
    schemaLocations.set(out, where);
  }
  return out;
}

/** Converts every entry of `definitions` into a schema document ajv can register under `docId`. */
export function definitionsDocument(definitions: JsonObject, docId: string): MutableSchema {
  return { $id: docId, definitions: mapValues(definitions, docId, '#/definitions') };
}

/** Every `format` value used anywhere in a (Swagger or converted) schema tree. */
export function collectFormats(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) collectFormats(item, into);
  } else if (isJsonObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'format' && typeof value === 'string') into.add(value);
      else collectFormats(value, into);
    }
  }
  return into;
}

/**
 * True for the extra errors ajv reports because of the `x-nullable` wrapping (the failed `null` branch and the
 * summary "must match a schema in anyOf"); the error of the non-null branch is always reported as well.
 */
export function isNullableNoise(error: ErrorObject): boolean {
  return error.keyword === 'anyOf' || (error.keyword === 'type' && error.params.type === 'null');
}
