import { sessionEndingDeps } from '#functions/create-deps.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { loadedOnUse, type OperationMap } from '#shared/http/operation.ts';
import { AUTH_POLICIES, AUTHENTICATION_ROUTES, AUTHENTICATORS } from '#shared/routes/groups/authentication-routes.ts';
import { EXTERNAL_JWT_SIGNER_ROUTES, EXTERNAL_JWT_SIGNERS } from '#shared/routes/groups/external-jwt-signer-routes.ts';
import { OIDC_AUTHENTICATION_ROUTES } from '#shared/routes/groups/oidc-routes.ts';
import { authenticate } from './authenticate.ts';

/** The operation names of `collection-operations.ts`, known without loading it. */
const COLLECTION_OPERATION_NAMES = [AUTHENTICATORS, AUTH_POLICIES, EXTERNAL_JWT_SIGNERS].flatMap((collection) =>
  Object.values(collection.names),
);

/** The OIDC provider's operations this function serves (discovery and keys are the info function's). */
const OIDC_OPERATION_NAMES = [...new Set(OIDC_AUTHENTICATION_ROUTES.map((route) => route.operation))];

export const operations: OperationMap = {
  authenticate,
  // The OIDC provider's steps: a legacy login never loads them.
  ...loadedOnUse(OIDC_OPERATION_NAMES, async () => (await import('./oidc/oidc-operations.ts')).oidcOperations),
  // Loaded with their first request: a login, the hot path, never reads these modules.
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
export const routes = [...AUTHENTICATION_ROUTES, ...EXTERNAL_JWT_SIGNER_ROUTES, ...OIDC_AUTHENTICATION_ROUTES];

export const handler = createGroupHandler('authentication', routes, operations, sessionEndingDeps);
