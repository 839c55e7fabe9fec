import { isIPv4, isIPv6 } from 'node:net';
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ConfigType } from '#shared/entities/config-type.ts';
import { invalidField } from '#shared/errors/api-error.ts';

type JsonObject = ConfigType['schema'];

/**
 * Like the reference's validator, unknown keywords and formats are ignored rather than refused; the formats the
 * built-in config types name that can be checked are.
 */
const OPTIONS: Options = {
  strict: false,
  logger: false,
  allErrors: false,
  formats: { ipv4: isIPv4, ipv6: isIPv6 },
};

/** A fresh validator per schema: schemas may share an `$id` (a type and its edited self) without clashing. */
function ajvFor(schema: JsonObject): Ajv {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (dialect.includes('2020-12')) return new Ajv2020(OPTIONS);
  if (dialect.includes('2019-09')) return new Ajv2019(OPTIONS);
  return new Ajv(OPTIONS);
}

/** Draft-07 and older schemas are read as draft-07: Ajv holds no meta-schema for the older drafts. */
function dialectless(schema: JsonObject): JsonObject {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (dialect.includes('2020-12') || dialect.includes('2019-09') || !('$schema' in schema)) return schema;
  const { $schema: _older, ...rest } = schema;
  return rest;
}

/**
 * Compiles a config type's schema, or answers 400 naming `schema` when it is not a JSON Schema the configs could be
 * checked against (the reference also requires the root to describe an object). An empty schema accepts any object.
 */
export function compileConfigTypeSchema(schema: JsonObject): ValidateFunction {
  if (Object.keys(schema).length > 0 && schema.type !== 'object') {
    throw invalidField('schema', 'invalid config type schema, root type must be object', schema);
  }
  // An asynchronous schema validates nothing synchronously: every config would pass.
  if (schema.$async !== undefined) throw invalidField('schema', 'invalid schema: $async is not supported', schema);
  try {
    return ajvFor(schema).compile(dialectless(schema));
  } catch (error) {
    throw invalidField('schema', `invalid schema: ${(error as Error).message}`, schema);
  }
}

/** Compiled validators by config type id, for the version (`updatedAt`) they were compiled from. */
const compiled = new Map<string, { readonly updatedAt: string; readonly validate: ValidateFunction }>();
/** Enough for every config type a network has; the oldest compiled goes first beyond it. */
const MAX_COMPILED = 500;

function validatorFor(configType: ConfigType): ValidateFunction {
  const cached = compiled.get(configType.id);
  if (cached?.updatedAt === configType.updatedAt) return cached.validate;
  const validate = compileConfigTypeSchema(configType.schema);
  compiled.delete(configType.id);
  compiled.set(configType.id, { updatedAt: configType.updatedAt, validate });
  if (compiled.size > MAX_COMPILED) {
    const [oldest] = compiled.keys();
    if (oldest !== undefined) compiled.delete(oldest);
  }
  return validate;
}

/** The JSON Pointer's segments of the value an error is about (the missing or extra property, where there is one). */
function segmentsOf(error: ErrorObject): string[] {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  const params = error.params as { missingProperty?: unknown; additionalProperty?: unknown };
  const property = error.keyword === 'required' ? params.missingProperty : params.additionalProperty;
  if (typeof property === 'string' && (error.keyword === 'required' || error.keyword === 'additionalProperties')) {
    segments.push(property);
  }
  return segments;
}

function valueAt(data: unknown, segments: readonly string[]): unknown {
  let current = data;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) return null;
    current = (current as Record<string, unknown>)[segment];
  }
  return current ?? null;
}

/** Checks a config's data against its type's schema; a failure is a 400 naming the path in `data` at fault. */
export function validateConfigData(configType: ConfigType, data: JsonObject): void {
  const validate = validatorFor(configType);
  if (validate(data)) return;
  const [error] = validate.errors ?? [];
  if (!error) throw invalidField('data', `data does not match the schema of config type ${configType.name}`, data);
  const segments = segmentsOf(error);
  const field = ['data', ...segments].join('.');
  const reason =
    error.keyword === 'required'
      ? `${field} is required`
      : error.keyword === 'additionalProperties'
        ? `${field} is not allowed`
        : `${field} ${error.message ?? 'is invalid'}`;
  throw invalidField(field, `${reason} (config type ${configType.name})`, valueAt(data, segments));
}
