import { defaultDeps } from '#functions/create-deps.ts';
import { deleteApiSession } from '#shared/auth/api-session-store.ts';
import { crudOperations } from '#shared/crud/crud-operations.ts';
import { createGroupHandler } from '#shared/http/create-group-handler.ts';
import { empty, ok } from '#shared/http/envelope.ts';
import { callerOf, documented, type Operation, type OperationMap } from '#shared/http/operation.ts';
import { pendingAuthQueries } from '#shared/mfa/auth-queries.ts';
import { AUTH_POLICIES, AUTHENTICATORS } from '#shared/routes/groups/authentication-routes.ts';
import { EXTERNAL_JWT_SIGNERS } from '#shared/routes/groups/external-jwt-signer-routes.ts';
import { currentApiSessionView } from '#shared/views/api-session-view.ts';
import { deleteAPISessions, detailAPISessions, listAPISessions } from './api-sessions.ts';
import { authPolicyApi } from './auth-policy-api.ts';
import { authenticate } from './authenticate.ts';
import { authenticatorApi } from './authenticator-api.ts';
import { listClientExternalJwtSigners } from './client-external-jwt-signers.ts';
import {
  detailCurrentIdentityAuthenticator,
  listCurrentIdentityAuthenticators,
  patchCurrentIdentityAuthenticator,
  updateCurrentIdentityAuthenticator,
} from './current-identity-authenticators.ts';
import { externalJwtSignerApi } from './external-jwt-signer-api.ts';
import {
  authenticateMfa,
  createMfaRecoveryCodes,
  createTotpToken,
  deleteMfa,
  detailMfa,
  detailMfaQrCode,
  detailMfaRecoveryCodes,
  enrollMfa,
  verifyMfa,
} from './mfa-operations.ts';

/** One operation on both APIs: the admin's full list on management, the anonymous client view on client. */
const listSigners = crudOperations(EXTERNAL_JWT_SIGNERS, externalJwtSignerApi)[EXTERNAL_JWT_SIGNERS.names.list]!;
const listExternalJwtSigners: Operation = documented(
  (request, deps) => (request.api === 'client' ? listClientExternalJwtSigners : listSigners)(request, deps),
  listClientExternalJwtSigners.docs ?? {},
);

export const operations: OperationMap = {
  authenticate,
  getCurrentAPISession: async (request, deps) => {
    const { session, identity, token } = callerOf(request);
    const view = currentApiSessionView(deps, session, identity.name, token);
    return ok({ ...view, authQueries: await pendingAuthQueries(deps, session, identity) });
  },
  deleteCurrentApiSession: async (request, deps) => {
    await deleteApiSession(deps, callerOf(request).session);
    return empty();
  },
  ...crudOperations(AUTHENTICATORS, authenticatorApi),
  ...crudOperations(AUTH_POLICIES, authPolicyApi),
  ...crudOperations(EXTERNAL_JWT_SIGNERS, externalJwtSignerApi, { list: listExternalJwtSigners }),
  listCurrentIdentityAuthenticators,
  detailCurrentIdentityAuthenticator,
  updateCurrentIdentityAuthenticator,
  patchCurrentIdentityAuthenticator,
  listAPISessions,
  detailAPISessions,
  deleteAPISessions,
  authenticateMfa,
  detailMfa,
  enrollMfa,
  deleteMfa,
  detailMfaQrCode,
  verifyMfa,
  detailMfaRecoveryCodes,
  createMfaRecoveryCodes,
  createTotpToken,
};

export const handler = createGroupHandler('authentication', operations, defaultDeps);
