import { actsAsAdmin, type Caller } from '#shared/auth/resolve-caller.ts';
import { type Session, sessions } from '#shared/entities/session.ts';
import { notFound } from '#shared/errors/api-error.ts';
import { empty, list, ok } from '#shared/http/envelope.ts';
import { callerOf, documented, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { listEntities, listEntitiesAmong } from '#shared/list/list-entities.ts';
import { parseListParams } from '#shared/list/list-params.ts';
import { mapBounded } from '#shared/map-bounded.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { circuitsOfSession } from '#shared/store/circuit-items.ts';
import { ctrlChangeOp } from '#shared/store/ctrl-changes.ts';
import { ConcurrentModificationError } from '#shared/store/entity-store.ts';
import { idsInIndexPartition } from '#shared/store/index-queries.ts';
import { keys } from '#shared/store/keys.ts';
import { sessionViews } from './session-view.ts';
import { tokensAsSignatures } from './token-filter.ts';

const QUERY_CONCURRENCY = 16;

/** The fields a session list names as filterable: the reference's, without where `token` is stored. */
const SHOWN_FILTERABLE = Object.keys(sessions.filterable).filter((name) => name !== 'tokenSignature');

/**
 * The ids of an identity's sessions: its API sessions (GSI2, `identities#<id>#api-sessions`), then the sessions
 * listed under each (in parallel): two waves.
 */
async function sessionIdsOfIdentity(deps: Deps, identityId: string): Promise<string[]> {
  const apiSessionIds = await idsInIndexPartition(deps.store, keys.sessionsIndex(identityId), 'api-sessions#');
  const lists = await mapBounded(apiSessionIds, QUERY_CONCURRENCY, (id) =>
    idsInIndexPartition(deps.store, keys.parentIndex('api-sessions', id), `${sessions.collection}#`),
  );
  return lists.flat();
}

/**
 * Whether the caller may see a session on this API: the management API (admins) or its own on the client API, or
 * any for an admin there whose session acts as one (`actsAsAdmin`: not a session routers hold).
 */
function mayRead(request: OperationRequest, caller: Caller, session: Session): boolean {
  return request.api === 'management' || actsAsAdmin(caller) || session.identityId === caller.identity.id;
}

/**
 * `GET /sessions`: on the management API every session; on the client API the caller's own, or every session for
 * an admin (as the reference's PublicQueryForIdentity). Paged, filtered and sorted like any list.
 */
export const listSessions: Operation = documented(
  async (request, deps) => {
    const caller = callerOf(request);
    const { identity } = caller;
    const parsed = await parseListParams(request.query, sessions.filterable);
    const params = { ...parsed, where: parsed.where && tokensAsSignatures(parsed.where) };
    const page =
      request.api === 'management' || actsAsAdmin(caller)
        ? await listEntities(deps, sessions, params)
        : await listEntitiesAmong(deps, sessions, await sessionIdsOfIdentity(deps, identity.id), params, (record) =>
            // The index lags behind: a session read by key is checked to be the caller's again.
            record.identityId === undefined ? true : record.identityId === identity.id,
          );
    const items =
      request.api === 'client' ? page.items.filter((session) => mayRead(request, caller, session)) : page.items;
    return list(await sessionViews(deps, items, request.api, request.baseUrl), page.pagination, SHOWN_FILTERABLE);
  },
  { list: { roleFilter: false } },
);

async function readableSession(request: OperationRequest, deps: Deps) {
  const caller = callerOf(request);
  const id = request.pathParameters.id ?? '';
  const stored = await deps.store.get(sessions, id);
  if (!stored || !mayRead(request, caller, stored.doc)) throw notFound('session', id);
  return stored;
}

/** `GET /sessions/{id}`. */
export const detailSession: Operation = async (request, deps) => {
  const stored = await readableSession(request, deps);
  const [view] = await sessionViews(deps, [stored.doc], request.api, request.baseUrl);
  if (!view) throw notFound('session', stored.doc.id);
  return ok(view);
};

/**
 * `DELETE /sessions/{id}`: ends the session (version-checked: two deletes count it down once). Its API session lives
 * on, so the change log is told: the control channel endpoints' memory of dials drops it (`ctrl-channel/dial-cache.ts`).
 */
export const deleteSession: Operation = async (request, deps) => {
  const stored = await readableSession(request, deps);
  try {
    await deps.store.transact([
      ...deps.store.deleteOps(sessions, stored.doc, stored.version),
      ctrlChangeOp(deps.store, { kind: 'session-removed', sessionId: stored.doc.id }, deps.now()),
    ]);
  } catch (error) {
    if (error instanceof ConcurrentModificationError) throw notFound('session', stored.doc.id);
    throw error;
  }
  return empty();
};

/**
 * `GET /sessions/{id}/route-path` (management): the routers of the session's circuit, ingress first (the first
 * circuit made, when a Dial session made several, as the reference shows the first it finds); empty when it has none.
 */
export const detailSessionRoutePath: Operation = async (request, deps) => {
  const stored = await readableSession(request, deps);
  const [circuit] = await circuitsOfSession(deps.store, stored.doc.id, deps.now());
  return ok({ routePath: circuit ? [...circuit.path] : [] });
};
