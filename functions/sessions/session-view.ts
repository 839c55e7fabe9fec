import { storedApiSessionIds } from '#shared/auth/api-session-store.ts';
import { edgeRouters } from '#shared/entities/edge-router.ts';
import { servicePolicies } from '#shared/entities/policies.ts';
import { services } from '#shared/entities/service.ts';
import { type Session, sessions } from '#shared/entities/session.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { removeStoredSessions } from '#shared/posture/session-lifetime.ts';
import type { Api } from '#shared/routes/route.ts';
import { type ClientEdgeRouterFields, clientEdgeRouterView } from '#shared/views/client-edge-router-view.ts';
import { entityRef, selfLinks } from '#shared/views/entity-ref.ts';

/** What a session shows of one of its routers (an edge router's document, or its id-order record). */
export type SessionRouter = ClientEdgeRouterFields;

/**
 * An edge router of a session (`sessionEdgeRouter`): the client fields and its `urls`, empty: no router process
 * reports to this controller yet (the reference's urls are the protocols a connected router reports).
 */
export function sessionEdgeRouterView(router: SessionRouter) {
  return { ...clientEdgeRouterView(router), urls: {} };
}

/** What the views of a page of sessions need besides the sessions: one parallel wave of batch reads. */
export interface SessionViewContext {
  readonly serviceNames: ReadonlyMap<string, string>;
  readonly routers: ReadonlyMap<string, SessionRouter>;
  readonly policyNames: ReadonlyMap<string, string>;
  /** The page's API sessions that are still stored. */
  readonly apiSessions: ReadonlySet<string>;
}

export async function sessionViewContext(deps: Deps, page: readonly Session[], api: Api): Promise<SessionViewContext> {
  const [serviceDocs, routerDocs, policyDocs, apiSessions] = await Promise.all([
    deps.store.getMany(
      services,
      page.map((session) => session.serviceId),
    ),
    deps.store.getMany(
      edgeRouters,
      page.flatMap((session) => session.edgeRouterIds),
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
  ]);
  return {
    serviceNames: new Map(serviceDocs.map((service) => [service.id, service.name])),
    routers: new Map(routerDocs.map((router) => [router.id, router])),
    policyNames: new Map(policyDocs.map((policy) => [policy.id, policy.name])),
    apiSessions,
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
    token: session.token,
    type: session.type,
    edgeRouters: session.edgeRouterIds.flatMap((id) => {
      const router = context.routers.get(id);
      return router ? [sessionEdgeRouterView(router)] : [];
    }),
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
export async function sessionViews(deps: Deps, page: readonly Session[], api: Api) {
  const context = await sessionViewContext(deps, page, api);
  const orphans = page.filter((session) => isOrphaned(session, context));
  await removeOrphans(deps, orphans);
  return page.filter((session) => !orphans.includes(session)).map((session) => sessionView(session, context, api));
}
