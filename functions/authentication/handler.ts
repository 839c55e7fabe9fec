import { defaultDeps } from '#functions/create-deps.ts';
import { deleteApiSession } from '#shared/auth/api-session-store.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { empty, ok } from '#shared/http/envelope.ts';
import { callerOf, loadedOnUse, type OperationMap, type OperationRequest } from '#shared/http/operation.ts';
import { pendingAuthQueries } from '#shared/mfa/auth-queries.ts';
import type { Deps } from '#shared/ports/deps.ts';
import { AUTH_POLICIES, AUTHENTICATION_ROUTES, AUTHENTICATORS } from '#shared/routes/groups/authentication-routes.ts';
import { EXTERNAL_JWT_SIGNER_ROUTES, EXTERNAL_JWT_SIGNERS } from '#shared/routes/groups/external-jwt-signer-routes.ts';
import { currentApiSessionView } from '#shared/views/api-session-view.ts';
import { authenticate } from './authenticate.ts';

/** The operation names of `collection-operations.ts`, known without loading it. */
const COLLECTION_OPERATION_NAMES = [AUTHENTICATORS, AUTH_POLICIES, EXTERNAL_JWT_SIGNERS].flatMap((collection) =>
  Object.values(collection.names),
);

export const operations: OperationMap = {
  authenticate,
  // An SDK's session refresh (every 20 minutes per device): it changes nothing, so its caller is read eventually first.
  getCurrentAPISession: Object.assign(
    async (request: OperationRequest, deps: Deps) => {
      const { session, identity, token } = callerOf(request);
      const view = currentApiSessionView(deps, session, identity.name, token);
      return ok({ ...view, authQueries: await pendingAuthQueries(deps, session, identity) });
    },
    { callerReads: { eventual: true as const } },
  ),
  deleteCurrentApiSession: async (request, deps) => {
    await deleteApiSession(deps, callerOf(request).session);
    return empty();
  },
  // Loaded with their first request: a login or a session read, the hot paths, never reads these modules.
  ...loadedOnUse(
    COLLECTION_OPERATION_NAMES,
    async () => (await import('./collection-operations.ts')).collectionOperations,
  ),
  ...loadedOnUse(
    [
      'listCurrentIdentityAuthenticators',
      'detailCurrentIdentityAuthenticator',
      'updateCurrentIdentityAuthenticator',
      'patchCurrentIdentityAuthenticator',
    ],
    () => import('./current-identity-authenticators.ts'),
  ),
  ...loadedOnUse(['listAPISessions', 'detailAPISessions', 'deleteAPISessions'], () => import('./api-sessions.ts')),
  ...loadedOnUse(
    [
      'authenticateMfa',
      'detailMfa',
      'enrollMfa',
      'deleteMfa',
      'detailMfaQrCode',
      'verifyMfa',
      'detailMfaRecoveryCodes',
      'createMfaRecoveryCodes',
      'createTotpToken',
    ],
    () => import('./mfa-operations.ts'),
  ),
};

/** The routes this function serves: its part of the route table (`shared/routes/route-table.ts`). */
export const routes = [...AUTHENTICATION_ROUTES, ...EXTERNAL_JWT_SIGNER_ROUTES];

export const handler = createGroupHandler('authentication', routes, operations, defaultDeps);
