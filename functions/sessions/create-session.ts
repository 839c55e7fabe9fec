import * as z from 'zod';
import type { ApiSession } from '#shared/auth/api-session.ts';
import { markHasSessionsOp } from '#shared/auth/api-session-store.ts';
import { type DialBind, type ServicePolicyRecord, servicePolicies } from '#shared/entities/policies.ts';
import { type PostureCheck, postureChecks } from '#shared/entities/posture-check.ts';
import { services } from '#shared/entities/service.ts';
import { type Session, sessionIdFor, sessions } from '#shared/entities/session.ts';
import { ApiError, type ErrorCause, invalidField, notFound } from '#shared/errors/api-error.ts';
import { API_VERSION_META } from '#shared/http/envelope.ts';
import { callerOf, documented, type Operation } from '#shared/http/operation.ts';
import { parseWith } from '#shared/http/validate.ts';
import { newId } from '#shared/ids.ts';
import { readAll } from '#shared/list/list-entities.ts';
import { issuerOf } from '#shared/pki/enrollment-jwt.ts';
import { sessionTokenKeys, signSessionJwt, storedSessionToken } from '#shared/pki/session-jwt.ts';
import {
  EDGE_ROUTER_POLICY,
  grantAmong,
  SERVICE_EDGE_ROUTER_POLICY,
  SERVICE_POLICY,
  selectable,
} from '#shared/policy/access.ts';
import { idsSelectedAmong, policiesSelecting } from '#shared/policy/reach.ts';
import { recordFailedServiceRequest } from '#shared/posture/failed-requests.ts';
import { type PostureData, readPostureData } from '#shared/posture/posture-data.ts';
import { checkFailure, checkPasses } from '#shared/posture/posture-evaluation.ts';
import { tagsField } from '#shared/schemas/common-fields.ts';
import { edgeRouterRecords, sessionEndsKey, sessionRouters, usableRouters } from './session-routers.ts';
import { sessionView } from './session-view.ts';

export const createSessionBody = z
  .object({
    serviceId: z.string().min(1).max(255),
    // The reference treats a missing type as Dial; `Invalid` is in its enum but grants nothing.
    type: z.enum(['Dial', 'Bind']).optional(),
    tags: tagsField.optional(),
  })
  .strict();

/** The service policies of one type that grant the service, with the posture checks each names. */
interface Granting {
  readonly policy: ServicePolicyRecord;
  readonly checks: readonly PostureCheck[];
}

/** The policies whose every posture check passes; for the others, which checks failed. */
function evaluatePolicies(granting: readonly Granting[], data: PostureData, now: Date) {
  const verdicts = new Map<string, boolean>();
  const passes = (check: PostureCheck) => {
    let verdict = verdicts.get(check.id);
    if (verdict === undefined) {
      verdict = checkPasses(check, data, now);
      verdicts.set(check.id, verdict);
    }
    return verdict;
  };
  const passing: string[] = [];
  const failing: { policy: ServicePolicyRecord; failed: PostureCheck[] }[] = [];
  for (const { policy, checks } of granting) {
    const failed = checks.filter((check) => !passes(check));
    if (failed.length === 0) passing.push(policy.id);
    else failing.push({ policy, failed });
  }
  return { passing, failing };
}

/**
 * The posture checks each policy names, resolved in memory from every posture check of the network (one query of
 * the type's documents: checks are an admin's handful, and reading them whole saves the wave a role read would take
 * before them). Nothing is read when no policy names a check.
 */
async function checksNamedBy(
  deps: Parameters<Operation>[1],
  policies: readonly ServicePolicyRecord[],
): Promise<PostureCheck[][]> {
  if (policies.every((policy) => policy.postureCheckRoles.length === 0)) return policies.map(() => []);
  const checks = await readAll(deps, postureChecks);
  const byId = new Map(checks.map((check) => [check.id, check]));
  const candidates = checks.map((check) => ({ id: check.id, attributes: check.roleAttributes }));
  return policies.map((policy) =>
    idsSelectedAmong(candidates, [{ roles: policy.postureCheckRoles, semantic: policy.semantic }]).flatMap(
      (id) => byId.get(id) ?? [],
    ),
  );
}

/**
 * `POST /sessions` (client): a Dial or Bind session for a service, allowed when a service policy of that type grants
 * the caller the service and every posture check of at least one such policy passes, and when an edge router is
 * usable by both (NO_EDGE_ROUTERS_AVAILABLE otherwise), as the reference decides. A service the caller cannot reach
 * at all is a 404; one it reaches only for the other type is a 400 on `serviceId` ("service not found"); failed
 * posture is a 409 INVALID_POSTURE, recorded for getIdentityFailedServiceRequests. The same API session asking again
 * for the same service and type gets its existing session back.
 *
 * Three DynamoDB waves (each wave's requests in parallel) after the caller's own, whatever the number of policies:
 * 1. what the caller and the service's id key: the service, the existing session, the caller's posture data, the
 *    service and edge router policies selecting the caller, every edge router's id-order record (`session-routers.ts`);
 * 2. what the service's roles key: its service edge router policies, and the posture checks when a granting policy
 *    names any (every check, resolved in memory);
 * 3. the write (one transaction) and, beside it, the usable routers' connection items (online, and the listeners
 *    their ClientHello named: the answer's `urls`; one batch request a hundred routers); the routers' fields come
 *    from their records.
 * A new session's token is a JWT the server key signs (`session-jwt.ts`) before the write: a key the function holds
 * (read once per cold start), so no call per session. Only its signature is stored; the answer rebuilds the token
 * from it as every read does, so all show the same text.
 * What admins write (policies, services, routers, checks) is read eventually consistently; what the caller itself
 * wrote (its session, its posture data) strongly.
 */
export const createSession: Operation = documented(
  async (request, deps) => {
    const { identity, session: apiSession } = callerOf(request);
    const body = parseWith(createSessionBody, request.body);
    const type: DialBind = body.type ?? 'Dial';
    const now = deps.now();
    const me = selectable(identity);
    const sessionId = sessionIdFor(apiSession.id, type, body.serviceId);

    const [service, existing, identityPolicies, routerPolicies, routerRecords, posture] = await Promise.all([
      deps.store.get(services, body.serviceId, 'clientGrants'),
      deps.store.get(sessions, sessionId),
      policiesSelecting(deps.store, SERVICE_POLICY, 'identities', me, 'clientGrants'),
      policiesSelecting(deps.store, EDGE_ROUTER_POLICY, 'identities', me, 'clientGrants'),
      edgeRouterRecords(deps),
      readPostureData(deps, apiSession.id),
    ]);
    if (!service) throw notFound('service', body.serviceId);
    const target = selectable(service.doc);
    const granting = grantAmong(identityPolicies, target).policies;
    if (granting.length === 0) throw notFound('service', body.serviceId);
    const ofType = granting.filter((policy) => policy.type === type);
    if (ofType.length === 0) throw invalidField('serviceId', 'service not found', body.serviceId);

    const [checksOfPolicy, serviceRouterPolicies] = await Promise.all([
      checksNamedBy(deps, ofType),
      policiesSelecting(deps.store, SERVICE_EDGE_ROUTER_POLICY, 'services', target, 'clientGrants'),
    ]);

    const { passing, failing } = evaluatePolicies(
      ofType.map((policy, i) => ({ policy, checks: checksOfPolicy[i] ?? [] })),
      posture.data,
      now,
    );
    if (passing.length === 0) {
      const names = new Map(
        (
          await deps.store.getMany(
            servicePolicies,
            failing.map(({ policy }) => policy.id),
          )
        ).map((policy) => [policy.id, policy.name]),
      );
      const policyFailures = failing.map(({ policy, failed }) => ({
        policyId: policy.id,
        policyName: names.get(policy.id) ?? '',
        checks: failed.map((check) => checkFailure(check, posture.data, now)),
      }));
      await recordFailedServiceRequest(deps, identity.id, {
        apiSessionId: apiSession.id,
        serviceId: service.doc.id,
        serviceName: service.doc.name,
        sessionType: type,
        when: now.toISOString(),
        policyFailures,
      }).catch((error: unknown) =>
        // The refusal stands even when recording it fails.
        deps.logger.warn('recording a failed service request failed', {
          error: error instanceof Error ? error.message : String(error),
        }),
      );
      // As the reference: by policy, the checks that failed, without what they expect (that is for admins to read in
      // the failed service requests), so the cause is that map alone.
      const cause = Object.fromEntries(
        failing.map(({ policy, failed }) => [
          policy.id,
          failed.map((check) => ({ id: check.id, typeId: check.typeId, isPassing: false })),
        ]),
      );
      throw new ApiError('INVALID_POSTURE', { cause: cause as unknown as ErrorCause });
    }

    const usable = usableRouters(routerRecords, routerPolicies, serviceRouterPolicies);
    if (usable.length === 0) throw new ApiError('NO_EDGE_ROUTERS_AVAILABLE');

    const same = existing?.doc;
    // The id is a hash: a session of another API session under it (never yet seen) gets a random id instead.
    const reuse = same?.apiSessionId === apiSession.id && same.type === type && same.serviceId === service.doc.id;
    const stamp = now.toISOString();
    const id = existing ? newId() : sessionId;
    const session: Session = reuse
      ? same
      : {
          id,
          createdAt: stamp,
          updatedAt: stamp,
          tags: body.tags ?? {},
          ...storedSessionToken(
            await signSessionJwt(deps.signers.server, {
              id,
              type,
              serviceId: service.doc.id,
              identityId: identity.id,
              apiSessionId: apiSession.id,
              issuedAt: now,
              baseUrl: request.baseUrl,
            }),
            deps.config.publicBaseUrl ? undefined : issuerOf(request.baseUrl),
          ),
          type,
          identityId: identity.id,
          apiSessionId: apiSession.id,
          serviceId: service.doc.id,
          servicePolicyIds: passing,
        };
    const [stored, routers, tokenKeys] = await Promise.all([
      reuse ? Promise.resolve(session) : storeSession(deps, session, apiSession),
      // The routers usable now, also for a session asked for again (the reference works them out on every answer).
      sessionRouters(deps, usable),
      sessionTokenKeys(deps.signers.server, request.baseUrl),
    ]);
    const context = {
      serviceNames: new Map([[service.doc.id, service.doc.name]]),
      routers: new Map([
        [sessionEndsKey(identity.id, service.doc.id), usable.flatMap((router) => routers.get(router.id) ?? [])],
      ]),
      policyNames: new Map<string, string>(),
      apiSessions: new Set([apiSession.id]),
      tokenKeys,
    };
    if (!reuse) deps.metrics.count('SessionsCreated', { type });
    const view = sessionView(stored, context, 'client');
    return { statusCode: 201, body: { data: view, meta: { ...API_VERSION_META } } };
  },
  { body: createSessionBody },
);

/**
 * Stores a new session, and its API session's flag that it has sessions unless already set (the API session's first
 * session only: a later one leaves that item alone); another request creating the same session first wins.
 */
async function storeSession(
  deps: Parameters<Operation>[1],
  session: Session,
  apiSession: ApiSession,
): Promise<Session> {
  try {
    await deps.store.transact([
      ...deps.store.createOps(sessions, session),
      ...(apiSession.hasSessions === true ? [] : [markHasSessionsOp(deps, apiSession.tokenHash)]),
    ]);
    return session;
  } catch (error) {
    const raced = await deps.store.get(sessions, session.id);
    if (raced && raced.doc.apiSessionId === session.apiSessionId) return raced.doc;
    throw error;
  }
}
