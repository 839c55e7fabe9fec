import { deleteApiSession } from '#shared/auth/api-session-store.ts';
import { empty, ok } from '#shared/http/envelope.ts';
import { callerOf, type Operation, type OperationRequest } from '#shared/http/operation.ts';
import { pendingAuthQueries } from '#shared/mfa/auth-queries.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { currentApiSessionView } from '#shared/views/api-session-view.ts';

/**
 * `GET /current-api-session`: an SDK's session refresh (every 20 minutes per device). It changes nothing, so its caller
 * is read eventually consistent first.
 */
export const getCurrentAPISession: Operation = Object.assign(
  async (request: OperationRequest, deps: Deps) => {
    const { session, identity, token } = callerOf(request);
    const view = currentApiSessionView(deps, session, identity.name, token);
    return ok({ ...view, authQueries: await pendingAuthQueries(deps, session, identity) });
  },
  { callerReads: { eventual: true as const } },
);

/** `DELETE /current-api-session`: log out, the session's token stops working at once. */
export const deleteCurrentApiSession: Operation = async (request, deps) => {
  await deleteApiSession(deps, callerOf(request).session);
  return empty();
};
