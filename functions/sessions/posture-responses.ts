import * as z from 'zod';
import { markHasPostureOp } from '#shared/auth/api-session-store.ts';
import type { Identity } from '#shared/entities/identity.ts';
import { type PostureCheck, postureChecks } from '#shared/entities/posture-check.ts';
import { services } from '#shared/entities/service.ts';
import { invalidField } from '#shared/errors/api-error.ts';
import { API_VERSION_META } from '#shared/http/envelope.ts';
import { callerOf, documented, type Operation } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { selectable, servicesOfIdentity } from '#shared/policy/access.ts';
import { RoleResolver } from '#shared/policy/reach.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { MAX_PROCESSES, type PostureData, type ProcessData, updatePostureData } from '#shared/posture/posture-data.ts';
import { cleanHex, MFA_PROMPT_GRACE_SECONDS } from '#shared/posture/posture-evaluation.ts';

const id = z.string().min(1).max(255);
const text = (max: number) => z.string().max(max);

/** One posture response, by `typeId` (the documents' `postureResponse*Create` classes). */
export const postureResponseSchema = z.discriminatedUnion('typeId', [
  z.object({ typeId: z.literal('DOMAIN'), id, domain: text(1024) }),
  z.object({ typeId: z.literal('MAC'), id, macAddresses: z.array(text(128)).max(256) }),
  z.object({ typeId: z.literal('OS'), id, type: text(255), version: text(255), build: text(255).optional() }),
  z.object({
    typeId: z.literal('PROCESS'),
    id,
    path: text(4096).optional(),
    isRunning: z.boolean().optional(),
    hash: text(1024).optional(),
    signerFingerprints: z.array(text(1024)).max(64).optional(),
  }),
  z.object({
    typeId: z.literal('ENDPOINT_STATE'),
    id,
    woken: z.boolean().optional(),
    unlocked: z.boolean().optional(),
  }),
]);
type PostureResponse = z.infer<typeof postureResponseSchema>;

/** Most responses one bulk request carries. */
export const MAX_BULK_RESPONSES = 100;
export const postureResponseBulkSchema = z.array(postureResponseSchema).max(MAX_BULK_RESPONSES);

/** The check types a response of each type may answer. */
const ANSWERS: Readonly<Record<Exclude<PostureResponse['typeId'], 'ENDPOINT_STATE'>, readonly string[]>> = {
  DOMAIN: ['DOMAIN'],
  MAC: ['MAC'],
  OS: ['OS'],
  PROCESS: ['PROCESS', 'PROCESS_MULTI'],
};

/**
 * Every response must answer an existing posture check of its type (endpoint-state responses answer none): a 400
 * naming the field (`id` or `typeId`, prefixed by the response's index in a bulk request) otherwise.
 */
async function checkTargets(deps: Deps, responses: readonly PostureResponse[], prefix: (i: number) => string) {
  const ids = responses.flatMap((response) => (response.typeId === 'ENDPOINT_STATE' ? [] : [response.id]));
  const found = new Map((await deps.store.getMany(postureChecks, ids)).map((check) => [check.id, check]));
  responses.forEach((response, i) => {
    if (response.typeId === 'ENDPOINT_STATE') return;
    const check = found.get(response.id);
    if (!check) throw invalidField(`${prefix(i)}id`, `no posture check with id ${response.id}`, response.id);
    if (!ANSWERS[response.typeId].includes(check.typeId)) {
      throw invalidField(
        `${prefix(i)}typeId`,
        `posture check ${check.id} is of type ${check.typeId}, not ${response.typeId}`,
        response.typeId,
      );
    }
  });
}

/** Keeps the latest `MAX_PROCESSES` reports, one per key. */
function upsert(list: readonly ProcessData[], report: ProcessData, key: (p: ProcessData) => string): ProcessData[] {
  return [...list.filter((p) => key(p) !== key(report)), report].slice(-MAX_PROCESSES);
}

/** The posture data after the responses, as the reference applies them (hex values cleaned). */
export function applyResponses(data: PostureData, responses: readonly PostureResponse[], at: string): PostureData {
  let next: PostureData = { ...data };
  for (const response of responses) {
    switch (response.typeId) {
      case 'DOMAIN':
        next = { ...next, domain: { postureCheckId: response.id, name: response.domain, lastUpdatedAt: at } };
        break;
      case 'MAC':
        next = {
          ...next,
          mac: { postureCheckId: response.id, addresses: response.macAddresses.map(cleanHex), lastUpdatedAt: at },
        };
        break;
      case 'OS':
        next = {
          ...next,
          os: {
            postureCheckId: response.id,
            type: response.type,
            version: response.version,
            build: response.build ?? '',
            lastUpdatedAt: at,
          },
        };
        break;
      case 'PROCESS': {
        const report: ProcessData = {
          postureCheckId: response.id,
          path: response.path ?? '',
          isRunning: response.isRunning ?? false,
          hash: cleanHex(response.hash ?? ''),
          signerFingerprints: (response.signerFingerprints ?? []).map(cleanHex),
          lastUpdatedAt: at,
        };
        next = {
          ...next,
          processes: upsert(next.processes, report, (p) => p.postureCheckId),
          processPaths: report.path === '' ? next.processPaths : upsert(next.processPaths, report, (p) => p.path),
        };
        break;
      }
      case 'ENDPOINT_STATE':
        next = {
          ...next,
          endpointState: {
            ...next.endpointState,
            ...(response.woken ? { wokenAt: at } : {}),
            ...(response.unlocked ? { unlockedAt: at } : {}),
          },
        };
        break;
    }
  }
  return next;
}

/**
 * The caller's services whose MFA checks a wake or unlock just put on a prompt (the reference's
 * GetEndpointStateChangeAffectedServices, narrowed to the caller's services): each with the lowest timeout of those
 * checks, and the grace period as what remains.
 */
async function promptedServices(
  deps: Deps,
  identity: Identity,
  data: PostureData,
  onWake: boolean,
  onUnlock: boolean,
  now: Date,
) {
  const passedAt = data.mfa?.passedAt;
  if (passedAt === undefined || now.getTime() - Date.parse(passedAt) <= MFA_PROMPT_GRACE_SECONDS * 1000) return [];
  const grants = await servicesOfIdentity(deps.store, selectable(identity));
  const policies = new Map([...grants.values()].flatMap((grant) => grant.policies.map((p) => [p.id, p] as const)));
  const resolver = new RoleResolver(deps.store);
  const checkIds = new Map(
    await Promise.all(
      [...policies.values()].map(
        async (policy) =>
          [
            policy.id,
            await resolver.ids('posture-checks', { roles: policy.postureCheckRoles, semantic: policy.semantic }),
          ] as const,
      ),
    ),
  );
  const checks = new Map(
    (await deps.store.getMany(postureChecks, [...new Set([...checkIds.values()].flat())])).map((c) => [c.id, c]),
  );
  const prompted = (check: PostureCheck | undefined): check is Extract<PostureCheck, { typeId: 'MFA' }> =>
    check?.typeId === 'MFA' && ((onWake && check.promptOnWake) || (onUnlock && check.promptOnUnlock));
  const timeouts = new Map<string, number>();
  for (const [serviceId, grant] of grants) {
    for (const policy of grant.policies) {
      for (const checkId of checkIds.get(policy.id) ?? []) {
        const check = checks.get(checkId);
        if (!prompted(check)) continue;
        const current = timeouts.get(serviceId);
        if (current === undefined || check.timeoutSeconds < current) timeouts.set(serviceId, check.timeoutSeconds);
      }
    }
  }
  const named = await deps.store.getMany(services, [...timeouts.keys()]);
  return named.map((service) => ({
    id: service.id,
    name: service.name,
    postureQueryType: 'MFA',
    timeout: timeouts.get(service.id) ?? -1,
    timeoutRemaining: MFA_PROMPT_GRACE_SECONDS,
  }));
}

async function respond(
  request: Parameters<Operation>[0],
  deps: Deps,
  responses: readonly PostureResponse[],
  prefix: (i: number) => string,
  statusCode: number,
) {
  const { identity, session } = callerOf(request);
  await checkTargets(deps, responses, prefix);
  const now = deps.now();
  const data = await updatePostureData(
    deps,
    { identityId: identity.id, apiSessionId: session.id },
    (stored) => applyResponses(stored, responses, now.toISOString()),
    [markHasPostureOp(deps, session.tokenHash)],
  );
  const onWake = responses.some((response) => response.typeId === 'ENDPOINT_STATE' && response.woken === true);
  const onUnlock = responses.some((response) => response.typeId === 'ENDPOINT_STATE' && response.unlocked === true);
  const affected = onWake || onUnlock ? await promptedServices(deps, identity, data, onWake, onUnlock, now) : [];
  return { statusCode, body: { data: { services: affected }, meta: { ...API_VERSION_META } } };
}

/** `POST /posture-response` (client): one response; 201 as the reference answers. */
export const createPostureResponse: Operation = documented(
  async (request, deps) => respond(request, deps, [parseWith(postureResponseSchema, request.body)], () => '', 201),
  { body: postureResponseSchema },
);

/** `POST /posture-response-bulk` (client): several responses applied together; 200 as the documents say. */
export const createPostureResponseBulk: Operation = documented(
  async (request, deps) =>
    respond(request, deps, parseWith(postureResponseBulkSchema, request.body), (i) => `${i}.`, 200),
  { body: postureResponseBulkSchema },
);
