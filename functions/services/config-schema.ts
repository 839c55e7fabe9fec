import { isIPv4, isIPv6 } from 'node:net';
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
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

/**
 * A fresh validator per schema: schemas may share an `$id` (a type and its edited self) without clashing. Ajv (150 KB
 * with its URI parser) loads with the first config or config type written, not with the services function.
 */
async function ajvFor(schema: JsonObject): Promise<Ajv> {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (dialect.includes('2020-12')) return new (await import('ajv/dist/2020.js')).Ajv2020(OPTIONS);
  if (dialect.includes('2019-09')) return new (await import('ajv/dist/2019.js')).Ajv2019(OPTIONS);
  return new (await import('ajv')).Ajv(OPTIONS);
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
export async function compileConfigTypeSchema(schema: JsonObject): Promise<ValidateFunction> {
  if (Object.keys(schema).length > 0 && schema.type !== 'object') {
    throw invalidField('schema', 'invalid config type schema, root type must be object', schema);
  }
  // An asynchronous schema validates nothing synchronously: every config would pass.
  if (schema.$async !== undefined) throw invalidField('schema', 'invalid schema: $async is not supported', schema);
  const ajv = await ajvFor(schema);
  try {
    return ajv.compile(dialectless(schema));
  } catch (error) {
    throw invalidField('schema', `invalid schema: ${(error as Error).message}`, schema);
  }
}

/** Compiled validators by config type id, for the version (`updatedAt`) they were compiled from. */
const compiled = new Map<string, { readonly updatedAt: string; readonly validate: ValidateFunction }>();
/** Enough for every config type a network has; the oldest compiled goes first beyond it. */
const MAX_COMPILED = 500;

async function validatorFor(configType: ConfigType): Promise<ValidateFunction> {
  const cached = compiled.get(configType.id);
  if (cached?.updatedAt === configType.updatedAt) return cached.validate;
  const validate = await compileConfigTypeSchema(configType.schema);
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
export async function validateConfigData(configType: ConfigType, data: JsonObject): Promise<void> {
  const validate = await validatorFor(configType);
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
