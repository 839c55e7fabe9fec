import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { servicesNotices } from './router-notice.ts';

/** The posture check types of the API, which are also the ids of the seeded posture check types (and MFA). */
export const POSTURE_CHECK_TYPE_IDS = ['OS', 'PROCESS', 'DOMAIN', 'MAC', 'MFA', 'PROCESS_MULTI'] as const;
export type PostureCheckTypeId = (typeof POSTURE_CHECK_TYPE_IDS)[number];

/** The API's `osType` values. */
export const OS_TYPES = ['Windows', 'WindowsServer', 'Android', 'iOS', 'Linux', 'macOS'] as const;
export const SEMANTICS = ['AllOf', 'AnyOf'] as const;

/** An MFA check's `timeoutSeconds` when it never times out; the reference stores any value not above 0 as this. */
export const NO_TIMEOUT = -1;

const osType = z.enum(OS_TYPES);

export const operatingSystemSchema = z.object({ type: osType, versions: z.array(z.string()) });

const processSchema = z.object({
  osType,
  path: z.string(),
  hashes: z.array(z.string()),
  signerFingerprint: z.string(),
});

const processMultiSchema = z.object({
  osType,
  path: z.string(),
  hashes: z.array(z.string()),
  signerFingerprints: z.array(z.string()),
});

const commonShape = {
  ...baseDocumentShape,
  name: z.string(),
  roleAttributes: z.array(z.string()),
  /**
   * The check's `version`, one more on every change. Not stored as `version`: that attribute is the kit's own
   * optimistic-concurrency counter on the item.
   */
  checkVersion: z.number().int(),
};

export const postureCheckSchema = z.discriminatedUnion('typeId', [
  z.object({ ...commonShape, typeId: z.literal('DOMAIN'), domains: z.array(z.string()) }),
  z.object({ ...commonShape, typeId: z.literal('MAC'), macAddresses: z.array(z.string()) }),
  z.object({ ...commonShape, typeId: z.literal('OS'), operatingSystems: z.array(operatingSystemSchema) }),
  z.object({ ...commonShape, typeId: z.literal('PROCESS'), process: processSchema }),
  z.object({
    ...commonShape,
    typeId: z.literal('PROCESS_MULTI'),
    semantic: z.enum(SEMANTICS),
    processes: z.array(processMultiSchema),
  }),
  z.object({
    ...commonShape,
    typeId: z.literal('MFA'),
    timeoutSeconds: z.number().int(),
    promptOnWake: z.boolean(),
    promptOnUnlock: z.boolean(),
    ignoreLegacyEndpoints: z.boolean(),
  }),
]);
export type PostureCheck = z.infer<typeof postureCheckSchema>;

export const postureChecks: EntityDefinition<PostureCheck> = {
  collection: 'posture-checks',
  readWhole: true,
  label: 'posture check',
  schema: postureCheckSchema,
  unique: ['name'],
  sortedBy: ['name'],
  filterable: {
    ...BASE_FILTERABLE,
    name: 'string',
    typeId: 'string',
    roleAttributes: 'stringSet',
    promptOnWake: 'boolean',
    promptOnUnlock: 'boolean',
  },
  roleAttributesField: 'roleAttributes',
  // What the routers' data models hold of the policies may change: they follow (`router-notice.ts`).
  routerNotices: servicesNotices,
};
