import * as z from 'zod';
import { sentFields } from '#shared/crud/crud-operations.ts';
import type { EntityApi } from '#shared/crud/entity-api.ts';
import {
  NO_TIMEOUT,
  OS_TYPES,
  POSTURE_CHECK_TYPE_IDS,
  type PostureCheck,
  type PostureCheckTypeId,
  postureChecks,
  SEMANTICS,
} from '#shared/entities/posture-check.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { parseWith } from '#shared/http/validate.ts';
import { nameField, roleAttributesField, tagsField } from '#shared/schemas/common-fields.ts';
import { postureCheckView } from '#shared/views/posture-check-view.ts';

// Bounds that keep a check well inside one stored item, far above what any real check lists.
const MAX_ENTRIES = 100;
const MAX_PROCESSES = 50;

/** A hex digest, any case, stored in lower case as the reference stores it (compared case-insensitively there). */
const hexDigest = (digits: number, what: string) =>
  z
    .string()
    .max(digits * 3)
    .transform((value) => value.replace(/[:\s]/g, '').toLowerCase())
    .pipe(z.string().regex(new RegExp(`^[0-9a-f]{${digits}}$`), `must be ${what}: ${digits} hexadecimal digits`));

/** SHA-512 of the executable, what the SDKs report for a process. */
const binaryHash = hexDigest(128, 'a SHA-512 hash of the binary');
/** SHA-1 of the signing certificate. */
const signerFingerprint = hexDigest(40, 'a SHA-1 fingerprint of the signer certificate');

/** Six hex octets, with or without `:`, `-` or `.` separators; kept as 12 lower-case digits, as the reference does. */
const macAddress = z
  .string()
  .max(32)
  .transform((value) => value.replace(/[:.\-\s]/g, '').toLowerCase())
  .pipe(z.string().regex(/^[0-9a-f]{12}$/, 'must be a MAC address: six hexadecimal octets such as 00:1a:2b:3c:4d:5e'));

/** Processes are only checked where SDKs report them (the reference's process check types list these). */
const MOBILE_OS_TYPES: readonly string[] = ['Android', 'iOS'];
const desktopOsType = z.enum(OS_TYPES).refine((os) => !MOBILE_OS_TYPES.includes(os), {
  message: 'process checks apply to Windows, WindowsServer, macOS and Linux',
});
const processPath = z.string().trim().min(1).max(1024);

const operatingSystem = z.object({
  type: z.enum(OS_TYPES),
  versions: z.array(z.string().trim().min(1).max(64)).max(MAX_ENTRIES).nullable().optional(),
});

const processField = z.object({
  osType: desktopOsType,
  path: processPath,
  hashes: z.array(binaryHash).max(MAX_ENTRIES).nullable().optional(),
  signerFingerprint: z
    .union([z.literal(''), signerFingerprint])
    .nullable()
    .optional(),
});

const processMultiField = z.object({
  osType: desktopOsType,
  path: processPath,
  hashes: z.array(binaryHash).max(MAX_ENTRIES).nullable().optional(),
  signerFingerprints: z.array(signerFingerprint).max(MAX_ENTRIES).nullable().optional(),
});

/** The fields that belong to one type of check each; null is the same as absent. */
const typeFieldShape = {
  domains: z.array(z.string().trim().min(1).max(255)).min(1).max(MAX_ENTRIES).nullable().optional(),
  macAddresses: z.array(macAddress).min(1).max(MAX_ENTRIES).nullable().optional(),
  operatingSystems: z.array(operatingSystem).min(1).max(OS_TYPES.length).nullable().optional(),
  process: processField.nullable().optional(),
  processes: z.array(processMultiField).min(1).max(MAX_PROCESSES).nullable().optional(),
  semantic: z.enum(SEMANTICS).nullable().optional(),
  timeoutSeconds: z.number().int().max(2_147_483_647).nullable().optional(),
  promptOnWake: z.boolean().nullable().optional(),
  promptOnUnlock: z.boolean().nullable().optional(),
  ignoreLegacyEndpoints: z.boolean().nullable().optional(),
};
type TypeField = keyof typeof typeFieldShape;
const TYPE_FIELDS = Object.keys(typeFieldShape) as TypeField[];
type TypeFields = z.infer<z.ZodObject<typeof typeFieldShape>>;

/** Which of those fields each type takes, and which it must have. */
const FIELDS_OF: Readonly<Record<PostureCheckTypeId, { required: TypeField[]; optional: TypeField[] }>> = {
  DOMAIN: { required: ['domains'], optional: [] },
  MAC: { required: ['macAddresses'], optional: [] },
  OS: { required: ['operatingSystems'], optional: [] },
  PROCESS: { required: ['process'], optional: [] },
  PROCESS_MULTI: { required: ['semantic', 'processes'], optional: [] },
  MFA: { required: [], optional: ['timeoutSeconds', 'promptOnWake', 'promptOnUnlock', 'ignoreLegacyEndpoints'] },
};

/** Each type's own fields; a patch's `process` holds just the fields it changes (the ziti CLI sends them so). */
function ownSchemaOf(type: PostureCheckTypeId, patch: boolean) {
  const { required, optional } = FIELDS_OF[type];
  const shape: Record<string, z.ZodType> = Object.fromEntries(
    [...required, ...optional].map((field) => [field, typeFieldShape[field]]),
  );
  if (patch && type === 'PROCESS') shape.process = processField.partial().nullable().optional();
  return z.object(shape);
}

/**
 * Whether a value carries nothing. The admin console sends every type's fields with every check, empty (`[]`, `''`,
 * `0`, templates of those) for the types it is not: the reference reads only the fields of the check's type.
 */
function isBlank(value: unknown): boolean {
  if (value === null || value === undefined || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.every(isBlank);
  if (typeof value === 'object') return Object.values(value).every(isBlank);
  return false;
}

/**
 * The fields of a check's own type from a body, validated. A field of another type with content is a 400 naming it;
 * blank ones, and `semantic` (which the admin console always sends), are ignored.
 */
function ownFields(type: PostureCheckTypeId, body: Partial<Record<TypeField, unknown>>, patch = false): TypeFields {
  const { required, optional } = FIELDS_OF[type];
  const own: Record<string, unknown> = {};
  for (const field of TYPE_FIELDS) {
    if (!Object.hasOwn(body, field)) continue;
    const value = body[field];
    if (required.includes(field) || optional.includes(field)) own[field] = value;
    else if (field !== 'semantic' && !isBlank(value)) {
      throw invalidField(field, `${field} is not a field of ${type} posture checks`, value);
    }
  }
  return parseWith(ownSchemaOf(type, patch), own) as TypeFields;
}

/** 400 for a field the check's type requires and the (merged) fields lack. */
function requireFields(type: PostureCheckTypeId, fields: TypeFields): void {
  for (const field of FIELDS_OF[type].required) {
    if (fields[field] === undefined || fields[field] === null) {
      throw invalidField(field, `${field} is required for ${type} posture checks`, null);
    }
  }
}

// The bodies' own shapes; type fields are read once the type is known (`ownFields`).
const looseTypeFields = Object.fromEntries(TYPE_FIELDS.map((field) => [field, z.unknown().optional()])) as Record<
  TypeField,
  z.ZodOptional<z.ZodUnknown>
>;
const typeId = z.enum(POSTURE_CHECK_TYPE_IDS);
const commonShape = {
  roleAttributes: roleAttributesField.optional(),
  tags: tagsField.optional(),
  ...looseTypeFields,
};

const createSchema = z.object({ name: nameField, typeId, ...commonShape });
// The type of a check is fixed at create: a replace may name it (it must be the stored one), a patch must.
const replaceSchema = z.object({ name: nameField, typeId: typeId.optional(), ...commonShape });
const patchSchema = z.object({ name: nameField.optional(), typeId, ...commonShape });

type PostureCheckCreate = z.infer<typeof createSchema>;
type PostureCheckReplace = z.infer<typeof replaceSchema>;
type PostureCheckPatch = z.infer<typeof patchSchema>;

/** 400 for a repeated entry the reference would silently collapse (it keys them by these values). */
function refuseRepeats<T>(field: string, entries: readonly T[], keyOf: (entry: T) => string): void {
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const key = keyOf(entry);
    if (seen.has(key)) throw invalidField(`${field}.${index}`, `${field} lists ${key} more than once`, entry);
    seen.add(key);
  });
}

/** The stored check of a type from its validated fields (`ownFields`, `requireFields`). */
function checkOf(
  type: PostureCheckTypeId,
  common: Pick<PostureCheck, 'id' | 'createdAt' | 'updatedAt' | 'tags' | 'name' | 'roleAttributes' | 'checkVersion'>,
  input: TypeFields,
): PostureCheck {
  switch (type) {
    case 'DOMAIN':
      return { ...common, typeId: type, domains: input.domains ?? [] };
    case 'MAC':
      return { ...common, typeId: type, macAddresses: [...new Set(input.macAddresses ?? [])] };
    case 'OS': {
      const operatingSystems = input.operatingSystems ?? [];
      refuseRepeats('operatingSystems', operatingSystems, (os) => os.type);
      return {
        ...common,
        typeId: type,
        operatingSystems: operatingSystems.map((os) => ({ type: os.type, versions: os.versions ?? [] })),
      };
    }
    case 'PROCESS': {
      const process = input.process!;
      return {
        ...common,
        typeId: type,
        process: {
          osType: process.osType,
          path: process.path,
          hashes: process.hashes ?? [],
          signerFingerprint: process.signerFingerprint ?? '',
        },
      };
    }
    case 'PROCESS_MULTI': {
      const processes = input.processes ?? [];
      refuseRepeats('processes', processes, (process) => `${process.osType} ${process.path}`);
      return {
        ...common,
        typeId: type,
        semantic: input.semantic!,
        processes: processes.map((process) => ({
          osType: process.osType,
          path: process.path,
          hashes: process.hashes ?? [],
          signerFingerprints: process.signerFingerprints ?? [],
        })),
      };
    }
    case 'MFA': {
      const timeoutSeconds = input.timeoutSeconds ?? NO_TIMEOUT;
      return {
        ...common,
        typeId: type,
        timeoutSeconds: timeoutSeconds > 0 ? timeoutSeconds : NO_TIMEOUT,
        promptOnWake: input.promptOnWake ?? false,
        promptOnUnlock: input.promptOnUnlock ?? false,
        ignoreLegacyEndpoints: input.ignoreLegacyEndpoints ?? false,
      };
    }
  }
}

/** A stored check's type fields as the body that would set them, so a patch is a replace of what was not sent. */
function typeFieldsOf(check: PostureCheck): TypeFields {
  const { id, createdAt, updatedAt, tags, name, roleAttributes, checkVersion, typeId: _type, ...fields } = check;
  return fields;
}

function refuseTypeChange(before: PostureCheck, requested: PostureCheckTypeId | undefined): void {
  if (requested !== undefined && requested !== before.typeId) {
    throw invalidField(
      'typeId',
      `a posture check's type cannot change (it is ${before.typeId}); create a new check instead`,
      requested,
    );
  }
}

/** The check after an update: the common fields given, the type kept, the version one more. */
function updated(
  before: PostureCheck,
  common: Pick<PostureCheck, 'name' | 'roleAttributes' | 'tags'>,
  fields: TypeFields,
): PostureCheck {
  requireFields(before.typeId, fields);
  const { id, createdAt, updatedAt, checkVersion } = before;
  return checkOf(before.typeId, { id, createdAt, updatedAt, ...common, checkVersion: checkVersion + 1 }, fields);
}

export const postureCheckApi: EntityApi<PostureCheck, PostureCheckCreate, PostureCheckReplace, PostureCheckPatch> = {
  def: postureChecks,
  createSchema,
  replaceSchema,
  patchSchema,
  roleFilter: true,
  create: (input, context) => {
    const fields = ownFields(input.typeId, input);
    requireFields(input.typeId, fields);
    const common = {
      id: context.id,
      createdAt: context.now,
      updatedAt: context.now,
      tags: input.tags ?? {},
      name: input.name,
      roleAttributes: input.roleAttributes ?? [],
      checkVersion: 1,
    };
    return { doc: checkOf(input.typeId, common, fields) };
  },
  // PUT: every field from the body, absent optional ones at their zero values.
  replace: (before, input) => {
    refuseTypeChange(before, input.typeId);
    const common = { name: input.name, roleAttributes: input.roleAttributes ?? [], tags: input.tags ?? {} };
    return updated(before, common, ownFields(before.typeId, input));
  },
  // PATCH: the keys sent over the check as it is; a sent null clears a field as PUT would.
  patch: (before, input, sent) => {
    refuseTypeChange(before, input.typeId);
    const changed = ownFields(before.typeId, sentFields(input, sent), true);
    const fields = { ...typeFieldsOf(before), ...changed };
    if (before.typeId === 'PROCESS' && changed.process) fields.process = { ...before.process, ...changed.process };
    const common = {
      name: input.name ?? before.name,
      roleAttributes: sent.has('roleAttributes') ? (input.roleAttributes ?? []) : before.roleAttributes,
      tags: sent.has('tags') ? (input.tags ?? {}) : before.tags,
    };
    return updated(before, common, fields);
  },
  view: (_deps, doc) => postureCheckView(doc),
};
