import * as z from 'zod';
import { variants } from '#shared/crud/variants.ts';
import { OS_TYPES, type PostureCheckTypeId, SEMANTICS } from '#shared/entities/posture-check.ts';
import { invalidField } from '#shared/errors/api-error.ts';

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

/** The request fields that belong to one type of check each; null is the same as absent. */
const TYPE_FIELDS = {
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

/**
 * The fields each type of check takes, and those it must have. The admin console sends `semantic` with every check:
 * it is read only for PROCESS_MULTI.
 */
export const checkTypes = variants<typeof TYPE_FIELDS, PostureCheckTypeId>({
  key: 'typeId',
  fields: TYPE_FIELDS,
  of: {
    DOMAIN: { required: ['domains'] },
    MAC: { required: ['macAddresses'] },
    OS: { required: ['operatingSystems'] },
    PROCESS: { required: ['process'] },
    PROCESS_MULTI: { required: ['semantic', 'processes'] },
    MFA: { optional: ['timeoutSeconds', 'promptOnWake', 'promptOnUnlock', 'ignoreLegacyEndpoints'] },
  },
  sentWithAll: ['semantic'],
});

/** 400 for a repeated entry the reference would silently collapse (it keys them by these values). */
export function refuseRepeats<T>(field: string, entries: readonly T[], keyOf: (entry: T) => string): void {
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const key = keyOf(entry);
    if (seen.has(key)) throw invalidField(`${field}.${index}`, `${field} lists ${key} more than once`, entry);
    seen.add(key);
  });
}
