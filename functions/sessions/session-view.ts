import { storedApiSessionIds } from '#shared/auth/api-session-store.ts';
import { identities } from '#shared/entities/identity.ts';
import { servicePolicies } from '#shared/entities/policies.ts';
import { services } from '#shared/entities/service.ts';
import { type Session, sessions } from '#shared/entities/session.ts';
import { type SessionTokenKeys, sessionTokenKeys, sessionTokenOf } from '#shared/pki/session-jwt.ts';
import { selectable } from '#shared/policy/access.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { removeStoredSessions } from '#shared/posture/session-lifetime.ts';
import type { Api } from '#shared/routes/route.ts';
import { clientEdgeRouterView } from '#shared/views/client-edge-router-view.ts';
import { entityRef, selfLinks } from '#shared/views/entity-ref.ts';
import { routersOfPairs, type SessionRouter, sessionEndsKey } from './session-routers.ts';

/**
 * An edge router of a session (`sessionEdgeRouter`): the client fields and its `urls`, the listeners its ClientHello
 * reported while it is connected (the reference's deprecated twin of `supportedProtocols`, which older SDKs read),
 * none while it is not.
 */
function sessionEdgeRouterView(router: SessionRouter) {
  const { status } = router;
  return { ...clientEdgeRouterView(router, status), urls: status.isOnline ? status.supportedProtocols : {} };
}

/** What the views of a page of sessions need besides the sessions: three waves of reads, whatever the page holds. */
export interface SessionViewContext {
  readonly serviceNames: ReadonlyMap<string, string>;
  /** The routers each session's identity and service may use now, by {@link sessionEndsKey}. */
  readonly routers: ReadonlyMap<string, readonly SessionRouter[]>;
  readonly policyNames: ReadonlyMap<string, string>;
  /** The page's API sessions that are still stored. */
  readonly apiSessions: ReadonlySet<string>;
  /** What the sessions' tokens are rebuilt with (`sessionTokenOf`). */
  readonly tokenKeys: SessionTokenKeys;
}

/**
 * The page's services, identities, policy names and API sessions (one wave of batch reads), then the routers each
 * session may use with their connection items (`routersOfPairs`, two waves more).
 */
export async function sessionViewContext(
  deps: Deps,
  page: readonly Session[],
  api: Api,
  baseUrl: string,
): Promise<SessionViewContext> {
  const [serviceDocs, identityDocs, policyDocs, apiSessions, tokenKeys] = await Promise.all([
    deps.store.getMany(
      services,
      page.map((session) => session.serviceId),
    ),
    deps.store.getMany(
      identities,
      page.map((session) => session.identityId),
    ),
    api === 'management'
      ? deps.store.getMany(
          servicePolicies,
          page.flatMap((session) => session.servicePolicyIds),
        )
      : Promise.resolve([]),
    storedApiSessionIds(
      deps,
      page.map((session) => session.apiSessionId),
    ),
    sessionTokenKeys(deps.signers.server, baseUrl),
  ]);
  const servicesById = new Map(serviceDocs.map((service) => [service.id, service]));
  const identitiesById = new Map(identityDocs.map((identity) => [identity.id, identity]));
  const pairs = page.flatMap((session) => {
    const identity = identitiesById.get(session.identityId);
    const service = servicesById.get(session.serviceId);
    return identity && service ? [{ identity: selectable(identity), service: selectable(service) }] : [];
  });
  return {
    serviceNames: new Map(serviceDocs.map((service) => [service.id, service.name])),
    routers: await routersOfPairs(deps, pairs),
    policyNames: new Map(policyDocs.map((policy) => [policy.id, policy.name])),
    apiSessions,
    tokenKeys,
  };
}

/**
 * Whether a session has outlived what it belongs to: its API session ended (and the cleanup that follows did not
 * reach it: DynamoDB's TTL, or more sessions than an identity's disable removes at once) or its service was deleted
 * (the reference deletes a service's sessions with it). Such a session is gone: views leave it out and remove it.
 */
export function isOrphaned(session: Session, context: SessionViewContext): boolean {
  return !context.apiSessions.has(session.apiSessionId) || !context.serviceNames.has(session.serviceId);
}

/** Removes orphaned sessions met by a read (best effort: each read again for its version, then removed). */
export async function removeOrphans(deps: Deps, orphans: readonly Session[]): Promise<void> {
  if (orphans.length === 0) return;
  try {
    const stored = await Promise.all(orphans.map((session) => deps.store.get(sessions, session.id)));
    await removeStoredSessions(
      deps,
      stored.flatMap((found) => (found ? [found] : [])),
    );
  } catch (error) {
    deps.logger.warn('removing orphaned sessions failed; a later read removes them', {
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

/** A session as the client (`sessionDetail`) or management API (`sessionManagementDetail`) shows it. */
export function sessionView(session: Session, context: SessionViewContext, api: Api) {
  const view = {
    id: session.id,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
    tags: session.tags,
    _links: selfLinks('sessions', session.id),
    apiSession: entityRef('api-sessions', session.apiSessionId, ''),
    apiSessionId: session.apiSessionId,
    service: entityRef('services', session.serviceId, context.serviceNames.get(session.serviceId) ?? ''),
    serviceId: session.serviceId,
    identityId: session.identityId,
    token: sessionTokenOf(session, context.tokenKeys),
    type: session.type,
    edgeRouters: (context.routers.get(sessionEndsKey(session.identityId, session.serviceId)) ?? []).map(
      sessionEdgeRouterView,
    ),
  };
  if (api === 'client') return view;
  return {
    ...view,
    servicePolicies: session.servicePolicyIds.flatMap((id) => {
      const name = context.policyNames.get(id);
      return name === undefined ? [] : [entityRef('service-policies', id, name)];
    }),
  };
}

/** The views of a page of sessions, without (and removing) orphaned ones. */
export async function sessionViews(deps: Deps, page: readonly Session[], api: Api, baseUrl: string) {
  const context = await sessionViewContext(deps, page, api, baseUrl);
  const orphans = page.filter((session) => isOrphaned(session, context));
  await removeOrphans(deps, orphans);
  return page.filter((session) => !orphans.includes(session)).map((session) => sessionView(session, context, api));
}
