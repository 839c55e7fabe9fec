import { getOrNotFound } from '#shared/crud/crud-operations.ts';
import { identities } from '#shared/entities/identity.ts';
import { ok } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { failedServiceRequests } from '#shared/posture/failed-requests.ts';
import { identityPostureData, type ProcessData, type StoredPostureData } from '#shared/posture/posture-data.ts';
import { mfaPromptsAnswered, NEVER } from '#shared/posture/posture-evaluation.ts';

/** The latest of one kind of report over the identity's API sessions. */
function latest<T extends { lastUpdatedAt: string }>(reports: readonly (T | undefined)[]): T | undefined {
  return reports
    .filter((report): report is T => report !== undefined)
    .sort((a, b) => (a.lastUpdatedAt < b.lastUpdatedAt ? -1 : 1))
    .at(-1);
}

function processView(report: ProcessData) {
  return {
    postureCheckId: report.postureCheckId,
    timedOut: false,
    lastUpdatedAt: report.lastUpdatedAt,
    binaryHash: report.hash,
    isRunning: report.isRunning,
    signerFingerprints: report.signerFingerprints,
  };
}

/** The identity's posture data as the management API shows it (`postureData`), from its API sessions' data. */
export function postureDataView(stored: readonly StoredPostureData[], now: Date) {
  const domain = latest(stored.map((s) => s.data.domain));
  const mac = latest(stored.map((s) => s.data.mac));
  const os = latest(stored.map((s) => s.data.os));
  const processes = new Map<string, ProcessData>();
  for (const report of stored
    .flatMap((s) => s.data.processes)
    .sort((a, b) => (a.lastUpdatedAt < b.lastUpdatedAt ? -1 : 1))) {
    processes.set(report.postureCheckId, report);
  }
  return {
    domain: {
      postureCheckId: domain?.postureCheckId ?? '',
      timedOut: false,
      lastUpdatedAt: domain?.lastUpdatedAt ?? NEVER,
      domain: domain?.name ?? '',
    },
    mac: {
      postureCheckId: mac?.postureCheckId ?? '',
      timedOut: false,
      lastUpdatedAt: mac?.lastUpdatedAt ?? NEVER,
      addresses: mac?.addresses ?? [],
    },
    os: {
      postureCheckId: os?.postureCheckId ?? '',
      timedOut: false,
      lastUpdatedAt: os?.lastUpdatedAt ?? NEVER,
      type: os?.type ?? '',
      version: os?.version ?? '',
      build: os?.build ?? '',
    },
    processes: [...processes.values()].map(processView),
    apiSessionPostureData: Object.fromEntries(
      stored.map((s) => {
        const prompts = mfaPromptsAnswered(s.data, now);
        return [
          s.apiSessionId,
          {
            mfa: {
              apiSessionId: s.apiSessionId,
              passedMfa: s.data.mfa?.passedAt !== undefined,
              passedAt: s.data.mfa?.passedAt ?? NEVER,
              passedOnWake: prompts.passedOnWake,
              passedOnUnlock: prompts.passedOnUnlock,
            },
            endpointState: {
              wokenAt: s.data.endpointState?.wokenAt ?? NEVER,
              unlockedAt: s.data.endpointState?.unlockedAt ?? NEVER,
            },
          },
        ];
      }),
    ),
  };
}

/** `GET /identities/{id}/posture-data` (management). */
export const getIdentityPostureData: Operation = async (request, deps) => {
  const identity = await getOrNotFound(deps, identities, request.pathParameters.id ?? '');
  return ok(postureDataView(await identityPostureData(deps, identity.doc.id), deps.now()));
};

/** `GET /identities/{id}/failed-service-requests` (management): the last refusals for failed posture, oldest first. */
export const getIdentityFailedServiceRequests: Operation = async (request, deps) => {
  const identity = await getOrNotFound(deps, identities, request.pathParameters.id ?? '');
  return ok(await failedServiceRequests(deps, identity.doc.id));
};
