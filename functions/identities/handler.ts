import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { ok } from '#shared/http/envelope.ts';
import { callerOf, type OperationMap } from '#shared/http/operation.ts';
import { identityView } from '#shared/views/identity-view.ts';

export const operations: OperationMap = {
  getCurrentIdentity: async (request, deps) => ok(await identityView(deps, callerOf(request).identity)),
};

export const handler = createGroupHandler('identities', operations);
