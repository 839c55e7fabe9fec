import { NO_TIMEOUT, type PostureCheck } from '../entities/posture-check.ts';
import type { PostureData, ProcessData } from './posture-data.ts';
import { parseSemVer, parseSemVerRange, type SemVerRange } from './semver.ts';

/**
 * Posture checks evaluated against an API session's posture data, as the reference does (controller/model
 * posture_check_model_*.go): pure functions of the check, the data and the time.
 */

/** How long before or after a wake or unlock an MFA pass still counts (the reference's MfaPromptGracePeriod). */
export const MFA_PROMPT_GRACE_SECONDS = 5 * 60;

/** The documents require these instants; Go's zero time stands for "never", as the reference renders it. */
export const NEVER = '0001-01-01T00:00:00.000Z';

/** Lower-case hex digits only: how the reference cleans MAC addresses, hashes and fingerprints before comparing. */
export function cleanHex(text: string): string {
  return text.toLowerCase().replace(/[^a-f\d]+/g, '');
}

const equalFold = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function domainPasses(check: Extract<PostureCheck, { typeId: 'DOMAIN' }>, data: PostureData): boolean {
  const reported = data.domain?.name ?? '';
  return check.domains.some((domain) => equalFold(domain, reported));
}

function macPasses(check: Extract<PostureCheck, { typeId: 'MAC' }>, data: PostureData): boolean {
  const valid = new Set(check.macAddresses.map(cleanHex));
  return (data.mac?.addresses ?? []).some((address) => valid.has(cleanHex(address)));
}

/** The check's version ranges by lower-case OS type; the last entry of a type wins, unparseable versions are skipped. */
function validOses(check: Extract<PostureCheck, { typeId: 'OS' }>): Map<string, SemVerRange[]> {
  const oses = new Map<string, SemVerRange[]>();
  for (const os of check.operatingSystems) {
    oses.set(
      os.type.toLowerCase(),
      os.versions.flatMap((version) => {
        const range = parseSemVerRange(version);
        return range ? [range] : [];
      }),
    );
  }
  return oses;
}

function osPasses(check: Extract<PostureCheck, { typeId: 'OS' }>, data: PostureData): boolean {
  if (!data.os) return false;
  const ranges = validOses(check).get(data.os.type.toLowerCase());
  if (!ranges) return false;
  if (ranges.length === 0) return true;
  const version = parseSemVer(data.os.version);
  return version !== undefined && ranges.some((range) => range(version));
}

function processPasses(check: Extract<PostureCheck, { typeId: 'PROCESS' }>, data: PostureData): boolean {
  const report = data.processes.find((process) => process.postureCheckId === check.id);
  if (!report?.isRunning) return false;
  // Reports are stored cleaned (`cleanHex`), as the reference stores them; the check's values are cleaned to compare.
  const fingerprint = cleanHex(check.process.signerFingerprint);
  if (fingerprint !== '' && !report.signerFingerprints.map(cleanHex).includes(fingerprint)) return false;
  if (check.process.hashes.length === 0) return true;
  return check.process.hashes.some((hash) => cleanHex(hash) === cleanHex(report.hash));
}

type MultiProcess = Extract<PostureCheck, { typeId: 'PROCESS_MULTI' }>['processes'][number];

/** A reported process against one process of a PROCESS_MULTI check (the reference's VerifyMultiCriteria). */
function meetsCriteria(report: ProcessData, process: MultiProcess): boolean {
  if (!report.isRunning) return false;
  const hashes = process.hashes.map(cleanHex);
  if (hashes.length > 0 && !hashes.includes(cleanHex(report.hash))) return false;
  const signers = new Set(report.signerFingerprints.map(cleanHex));
  return process.signerFingerprints.length === 0 || process.signerFingerprints.some((s) => signers.has(cleanHex(s)));
}

function processMultiPasses(check: Extract<PostureCheck, { typeId: 'PROCESS_MULTI' }>, data: PostureData): boolean {
  const byPath = new Map(data.processPaths.map((report) => [report.path, report]));
  const passes = (process: MultiProcess) => {
    if (process.path === '') return false;
    const report = byPath.get(process.path);
    return report !== undefined && meetsCriteria(report, process);
  };
  return check.semantic === 'AllOf' ? check.processes.every(passes) : check.processes.some(passes);
}

type MfaCheck = Extract<PostureCheck, { typeId: 'MFA' }>;

const seconds = (from: string, to: Date) => Math.trunc((to.getTime() - Date.parse(from)) / 1000);

/** Whether a wake (or unlock) at `eventAt` is answered: none, before the MFA pass, or still inside the grace period. */
function passedAfterEvent(eventAt: string | undefined, passedAt: string, now: Date): boolean {
  if (eventAt === undefined) return true;
  if (Date.parse(eventAt) < Date.parse(passedAt)) return true;
  return now.getTime() - MFA_PROMPT_GRACE_SECONDS * 1000 < Date.parse(eventAt);
}

function mfaPasses(check: MfaCheck, data: PostureData, now: Date): boolean {
  const passedAt = data.mfa?.passedAt;
  if (passedAt === undefined) return false;
  if (check.timeoutSeconds !== NO_TIMEOUT && check.timeoutSeconds > 0) {
    if (Date.parse(passedAt) + check.timeoutSeconds * 1000 < now.getTime()) return false;
  }
  if (check.promptOnWake && !passedAfterEvent(data.endpointState?.wokenAt, passedAt, now)) return false;
  if (check.promptOnUnlock && !passedAfterEvent(data.endpointState?.unlockedAt, passedAt, now)) return false;
  return true;
}

/** The seconds until an MFA check times out for this session (the reference's getTimeoutRemainingAtSeconds). */
function mfaTimeoutRemaining(check: MfaCheck, data: PostureData, now: Date): number {
  if (check.timeoutSeconds === NO_TIMEOUT || check.timeoutSeconds <= 0) return NO_TIMEOUT;
  const passedAt = data.mfa?.passedAt;
  if (passedAt === undefined) return 0;
  // The reference exempts "legacy" endpoints it cannot identify (no SDK info), which is every endpoint here.
  if (check.ignoreLegacyEndpoints) return NO_TIMEOUT;
  let remaining = check.timeoutSeconds - seconds(passedAt, now);
  if (remaining <= 0) return 0;
  const graceAfter = (eventAt: string | undefined) =>
    eventAt !== undefined && Date.parse(eventAt) > Date.parse(passedAt)
      ? Math.max(0, MFA_PROMPT_GRACE_SECONDS - seconds(eventAt, now))
      : undefined;
  const onWake = check.promptOnWake ? graceAfter(data.endpointState?.wokenAt) : undefined;
  const onUnlock = check.promptOnUnlock ? graceAfter(data.endpointState?.unlockedAt) : undefined;
  for (const limit of [onWake, onUnlock]) if (limit !== undefined && limit < remaining) remaining = limit;
  return remaining;
}

/** Whether one posture check passes for this data at `now`. */
export function checkPasses(check: PostureCheck, data: PostureData, now: Date): boolean {
  switch (check.typeId) {
    case 'DOMAIN':
      return domainPasses(check, data);
    case 'MAC':
      return macPasses(check, data);
    case 'OS':
      return osPasses(check, data);
    case 'PROCESS':
      return processPasses(check, data);
    case 'PROCESS_MULTI':
      return processMultiPasses(check, data);
    case 'MFA':
      return mfaPasses(check, data, now);
  }
}

/** A check's state as the client's posture queries show it. */
export interface PostureQueryState {
  readonly isPassing: boolean;
  readonly timeout: number;
  readonly timeoutRemaining: number;
}

/** One check's passing state with its timeout (seconds; -1 for checks that never time out) and what is left of it. */
export function evaluateCheck(check: PostureCheck, data: PostureData, now: Date): PostureQueryState {
  const isPassing = checkPasses(check, data, now);
  if (check.typeId !== 'MFA') return { isPassing, timeout: NO_TIMEOUT, timeoutRemaining: NO_TIMEOUT };
  const timeout = check.timeoutSeconds > 0 ? check.timeoutSeconds : NO_TIMEOUT;
  return { isPassing, timeout, timeoutRemaining: mfaTimeoutRemaining(check, data, now) };
}

/** Whether the MFA data satisfies a wake and an unlock prompt now (the admin view's passedOnWake / passedOnUnlock). */
export function mfaPromptsAnswered(data: PostureData, now: Date): { passedOnWake: boolean; passedOnUnlock: boolean } {
  const passedAt = data.mfa?.passedAt;
  if (passedAt === undefined) return { passedOnWake: false, passedOnUnlock: false };
  return {
    passedOnWake: passedAfterEvent(data.endpointState?.wokenAt, passedAt, now),
    passedOnUnlock: passedAfterEvent(data.endpointState?.unlockedAt, passedAt, now),
  };
}

/** What failed of one posture check, as the reference reports it (`postureCheckFailure` and its per-type values). */
export function checkFailure(check: PostureCheck, data: PostureData, now: Date): Record<string, unknown> {
  const common = { postureCheckId: check.id, postureCheckName: check.name, postureCheckType: check.typeId };
  const reportOf = (report: ProcessData | undefined, osType?: string) => ({
    ...(osType ? { osType } : {}),
    path: report?.path ?? '',
    isRunning: report?.isRunning ?? false,
    hash: report?.hash ?? '',
    signerFingerprints: report?.signerFingerprints ?? [],
  });
  switch (check.typeId) {
    case 'DOMAIN':
      return { ...common, actualValue: data.domain?.name ?? '', expectedValue: check.domains };
    case 'MAC':
      return { ...common, actualValue: data.mac?.addresses ?? [], expectedValue: check.macAddresses };
    case 'OS':
      return {
        ...common,
        actualValue: { type: data.os?.type ?? '', version: data.os?.version ?? '' },
        expectedValue: check.operatingSystems,
      };
    case 'PROCESS':
      return {
        ...common,
        actualValue: reportOf(
          data.processes.find((process) => process.postureCheckId === check.id),
          check.process.osType,
        ),
        expectedValue: check.process,
      };
    case 'PROCESS_MULTI': {
      const paths = new Set(check.processes.map((process) => process.path));
      return {
        ...common,
        semantic: check.semantic,
        actualValue: data.processPaths.filter((report) => paths.has(report.path)).map((report) => reportOf(report)),
        expectedValue: check.processes,
      };
    }
    case 'MFA': {
      const passedAt = data.mfa?.passedAt;
      const prompts = mfaPromptsAnswered(data, now);
      const timeoutSeconds = check.timeoutSeconds > 0 ? check.timeoutSeconds : NO_TIMEOUT;
      const timedOut =
        passedAt === undefined ||
        (timeoutSeconds !== NO_TIMEOUT && Date.parse(passedAt) + timeoutSeconds * 1000 < now.getTime());
      return {
        ...common,
        actualValue: {
          passedMfa: passedAt !== undefined,
          timedOut,
          passedOnWake: prompts.passedOnWake,
          passedOnUnlock: prompts.passedOnUnlock,
        },
        expectedValue: {
          passedMfa: true,
          timedOut: false,
          passedOnWake: check.promptOnWake,
          passedOnUnlock: check.promptOnUnlock,
        },
        criteria: {
          passedMfaAt: passedAt ?? NEVER,
          wokenAt: data.endpointState?.wokenAt ?? NEVER,
          unlockedAt: data.endpointState?.unlockedAt ?? NEVER,
          timeoutSeconds,
          timeoutRemainingSeconds: mfaTimeoutRemaining(check, data, now),
        },
      };
    }
  }
}
