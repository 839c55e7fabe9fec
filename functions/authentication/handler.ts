import { deleteApiSession } from '#shared/auth/api-session-store.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { empty, ok } from '#shared/http/envelope.ts';
import { callerOf, type OperationMap } from '#shared/http/operation.ts';
import { currentApiSessionView } from '#shared/views/api-session-view.ts';
import { authenticate } from './authenticate.ts';

export const operations: OperationMap = {
  authenticate,
  getCurrentAPISession: async (request, deps) => {
    const { session, identity, token } = callerOf(request);
    return ok(currentApiSessionView(deps, session, identity.name, token));
  },
  deleteCurrentApiSession: async (request, deps) => {
    await deleteApiSession(deps, callerOf(request).session);
    return empty();
  },
};

export const handler = createGroupHandler('authentication', operations);
