import * as z from 'zod';
import { baseDocumentShape } from './base-document.ts';
import { BASE_FILTERABLE, type EntityDefinition } from './entity-definition.ts';
import { operatingSystemSchema } from './posture-check.ts';

export const postureCheckTypeSchema = z.object({
  ...baseDocumentShape,
  name: z.string(),
  operatingSystems: z.array(operatingSystemSchema),
});
export type PostureCheckType = z.infer<typeof postureCheckTypeSchema>;

export const postureCheckTypes: EntityDefinition<PostureCheckType> = {
  collection: 'posture-check-types',
  label: 'posture check type',
  schema: postureCheckTypeSchema,
  unique: ['name'],
  sortedBy: ['name'],
  filterable: { ...BASE_FILTERABLE, name: 'string' },
};

type OperatingSystem = PostureCheckType['operatingSystems'][number];

// The operating systems and versions the reference seeds (its initial migration, and v23 for PROCESS_MULTI).
const WINDOWS: OperatingSystem = { type: 'Windows', versions: ['Vista', '7', '8', '10', '2000'] };
const LINUX: OperatingSystem = { type: 'Linux', versions: ['4.14', '4.19', '5.4', '5.9'] };
const IOS: OperatingSystem = { type: 'iOS', versions: ['11', '12'] };
const MACOS: OperatingSystem = { type: 'macOS', versions: ['10.15', '11.0'] };
const ANDROID: OperatingSystem = { type: 'Android', versions: ['9', '10', '11'] };
const anyVersion = (os: OperatingSystem): OperatingSystem => ({ type: os.type, versions: [] });

/**
 * The posture check types every controller has, with the reference's ids and names. MFA is a valid check type that
 * the reference does not list here, and neither do we.
 */
export const SEEDED_POSTURE_CHECK_TYPES: readonly Pick<PostureCheckType, 'id' | 'name' | 'operatingSystems'>[] = [
  { id: 'OS', name: 'Operating System Check', operatingSystems: [WINDOWS, LINUX, ANDROID, MACOS, IOS] },
  { id: 'PROCESS', name: 'Process Check', operatingSystems: [WINDOWS, MACOS, LINUX] },
  { id: 'DOMAIN', name: 'Windows Domain Check', operatingSystems: [WINDOWS] },
  { id: 'MAC', name: 'MAC Address Check', operatingSystems: [WINDOWS, LINUX, MACOS, ANDROID] },
  {
    id: 'PROCESS_MULTI',
    name: 'Process Multi Check',
    operatingSystems: [anyVersion(WINDOWS), anyVersion(MACOS), anyVersion(LINUX)],
  },
];
