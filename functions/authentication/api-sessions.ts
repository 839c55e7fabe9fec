import { type ApiSession, apiSessions } from '#shared/auth/api-session.ts';
import { deleteApiSession, getApiSessionById, sessionExpiry } from '#shared/auth/api-session-store.ts';
import { VIEW_CONCURRENCY } from '#shared/crud/crud-operations.ts';
import type { Deps } from '#shared/deps.ts';
import { identities } from '#shared/entities/identity.ts';
import { notFound } from '#shared/http/api-error.ts';
import { empty, list, ok } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { listEntities } from '#shared/list/list-entities.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { BoolExpr } from '#shared/query/filter-ast.ts';
import { apiSessionView } from '#shared/views/api-session-view.ts';
import { nameLookup } from '#shared/views/name-lookup.ts';

/** Only sessions still inside the inactivity timeout: DynamoDB's TTL removes the others late, if at all soon. */
function liveSessions(deps: Deps): BoolExpr {
  const cutoff = deps.now().getTime() - deps.config.apiSessionTimeoutMinutes * 60_000;
  return {
    kind: 'compare',
    lhs: { kind: 'field', field: 'lastActivityAt', position: 0 },
    operator: '>',
    value: { type: 'datetime', value: new Date(cutoff).toISOString(), instant: cutoff, position: 0 },
  };
}

function isExpired(deps: Deps, session: ApiSession): boolean {
  return Date.parse(sessionExpiry(deps, session).expiresAt) <= deps.now().getTime();
}

/** The session with the path's id, unless unknown or expired. */
async function liveSessionOrNotFound(deps: Deps, id: string): Promise<ApiSession> {
  const session = await getApiSessionById(deps, id);
  if (!session || isExpired(deps, session)) throw notFound(apiSessions.label, id);
  return session;
}

/** Admin views of sessions, each identity's name read once. */
function viewsOf(deps: Deps, sessions: readonly ApiSession[]): Promise<unknown[]> {
  const identityName = nameLookup(deps, identities);
  return mapBounded(sessions, VIEW_CONCURRENCY, async (session) =>
    apiSessionView(session, await identityName(session.identityId)),
  );
}

/**
 * `GET /api-sessions`: live sessions only. The expiry condition always applies, so the list reads every session and
 * filters in memory; the type has no counter for the kit's unfiltered fast path.
 */
export const listAPISessions: Operation = async (request, deps) => {
  const params = parseListParams(request.query, apiSessions.filterable);
  const live = liveSessions(deps);
  const where: BoolExpr = params.where ? { kind: 'and', operands: [live, params.where] } : live;
  const page = await listEntities(deps, apiSessions, { ...params, where });
  return list(await viewsOf(deps, page.items), page.pagination, Object.keys(apiSessions.filterable));
};

/** `GET /api-sessions/{id}`: the admin view, without the token. */
export const detailAPISessions: Operation = async (request, deps) => {
  const session = await liveSessionOrNotFound(deps, request.pathParameters.id ?? '');
  const [view] = await viewsOf(deps, [session]);
  return ok(view);
};

/** `DELETE /api-sessions/{id}`: the session's token stops working at once. */
export const deleteAPISessions: Operation = async (request, deps) => {
  const session = await liveSessionOrNotFound(deps, request.pathParameters.id ?? '');
  await deleteApiSession(deps, session);
  request.logger.info('api session deleted', { apiSessionId: session.id, identityId: session.identityId });
  return empty();
};
