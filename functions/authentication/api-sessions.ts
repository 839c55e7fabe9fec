import { type ApiSession, apiSessions } from '#shared/auth/api-session.ts';
import { listLiveApiSessions } from '#shared/auth/api-session-list.ts';
import { deleteApiSession, getApiSessionById, identityOfSession, isLive } from '#shared/auth/api-session-store.ts';
import type { Identity } from '#shared/entities/identity.ts';
import { notFound } from '#shared/errors/api-error.ts';
import { empty, list, ok } from '#shared/http/envelope.ts';
import type { Operation } from '#shared/http/operation.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { apiSessionView } from '#shared/views/api-session-view.ts';

/**
 * The session with the path's id and its identity, unless unknown, expired or revoked by its identity (then it is
 * removed now).
 */
async function liveSessionOrNotFound(deps: Deps, id: string): Promise<{ session: ApiSession; identity: Identity }> {
  const session = await getApiSessionById(deps, id);
  if (!session || !isLive(deps, session)) throw notFound(apiSessions.label, id);
  const identity = await identityOfSession(deps, session);
  if (!identity) throw notFound(apiSessions.label, id);
  return { session, identity };
}

/** `GET /api-sessions`: live sessions only, paged from the indexes (see `listLiveApiSessions`). */
export const listAPISessions: Operation = async (request, deps) => {
  const params = await parseListParams(request.query, apiSessions.filterable);
  const page = await listLiveApiSessions(deps, params);
  const views = page.items.map(({ session, identity }) => apiSessionView(session, identity.name));
  return list(views, page.pagination, Object.keys(apiSessions.filterable));
};

/** `GET /api-sessions/{id}`: the admin view, without the token. */
export const detailAPISessions: Operation = async (request, deps) => {
  const { session, identity } = await liveSessionOrNotFound(deps, request.pathParameters.id ?? '');
  return ok(apiSessionView(session, identity.name));
};

/** `DELETE /api-sessions/{id}`: the session's token stops working at once. */
export const deleteAPISessions: Operation = async (request, deps) => {
  const { session } = await liveSessionOrNotFound(deps, request.pathParameters.id ?? '');
  await deleteApiSession(deps, session);
  request.logger.info('api session deleted', { apiSessionId: session.id, identityId: session.identityId });
  return empty();
};
